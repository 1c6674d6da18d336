"""QGIS's state as plain data, and the milestones between two reads.

`read()` takes what the tasks are about from the running QGIS: the project (file, title, CRS, unsaved
changes), every layer in the Layers panel's order top down (type, source, CRS, opacity, visibility, notes,
extent, and for a single-symbol vector layer its colour and its symbol's unit) and the map canvas (extent,
scale, which layers it is zoomed to). `diff(old, new)` turns two reads into events. Runs on QGIS's main
thread.
"""

from __future__ import annotations

import re

from qgis.core import (QgsCoordinateTransform, QgsLayerNotesUtils, QgsMapLayer, QgsProject, QgsRectangle,
                       QgsUnitTypes)

# the symbol units by the names QGIS's unit selector shows (and the templates use)
UNITS = {QgsUnitTypes.RenderMillimeters: "Millimeters", QgsUnitTypes.RenderPoints: "Points",
         QgsUnitTypes.RenderPixels: "Pixels", QgsUnitTypes.RenderMetersInMapUnits: "Meters at Scale",
         QgsUnitTypes.RenderMapUnits: "Map Units", QgsUnitTypes.RenderInches: "Inches"}
GEOMETRIES = {0: "point", 1: "line", 2: "polygon", 3: "unknown", 4: "null"}  # QgsWkbTypes.GeometryType
FIT = 0.9  # a canvas "zoomed to" a layer: shows all of it, and it spans this share of the canvas's width or height


def num(v, places: int = 6) -> float:
    return round(float(v), places) + 0.0


def rect(r: QgsRectangle) -> list[float]:
    return [num(r.xMinimum()), num(r.yMinimum()), num(r.xMaximum()), num(r.yMaximum())]


def plain(html: str) -> str:
    """Layer notes are rich text: the words a person wrote, without the markup."""
    text = re.sub(r"(?is)<(head|style|script)\b.*?</\1>", " ", html or "")
    text = re.sub(r"<[^>]+>", " ", text)
    text = text.replace("&nbsp;", " ").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"') \
               .replace("&#39;", "'").replace("&amp;", "&")
    return " ".join(text.split())


def _symbol(layer) -> dict:
    renderer = layer.renderer()
    out = {"renderer": renderer.type() if renderer else None}
    symbol = renderer.symbol() if renderer is not None and renderer.type() == "singleSymbol" else None
    if symbol is not None:
        unit = symbol.outputUnit()
        out.update(color=symbol.color().name().lower(), unit=UNITS.get(unit, QgsUnitTypes.encodeUnit(unit)))
    return out


def _layer(node, canvas_crs, project) -> dict:
    layer = node.layer()
    kind = {QgsMapLayer.VectorLayer: "vector", QgsMapLayer.RasterLayer: "raster"}.get(layer.type(), "other")
    out = {"name": layer.name(), "id": layer.id(), "type": kind, "provider": layer.providerType(),
           "source": layer.source(), "crs": layer.crs().authid(), "visible": node.isVisible(),
           "opacity": num(layer.opacity() * 100, 2), "notes": plain(QgsLayerNotesUtils.layerNotes(layer)),
           "valid": layer.isValid(), "extent": rect(layer.extent())}
    if kind == "vector":
        out.update(_symbol(layer), features=layer.featureCount(),
                   geometry=GEOMETRIES.get(layer.geometryType(), str(layer.geometryType())))
    try:
        xform = QgsCoordinateTransform(layer.crs(), canvas_crs, project)
        out["canvas_extent"] = rect(xform.transformBoundingBox(layer.extent()))
    except Exception:
        out["canvas_extent"] = None
    return out


def fits(canvas: list[float], layer: list[float] | None) -> bool:
    """Whether a canvas extent shows all of a layer's extent and is about as big as it (zoomed to it)."""
    if not layer:
        return False
    cw, ch = canvas[2] - canvas[0], canvas[3] - canvas[1]
    lw, lh = layer[2] - layer[0], layer[3] - layer[1]
    if cw <= 0 or ch <= 0:
        return False
    slack = 1e-6 * max(cw, ch)
    inside = (layer[0] >= canvas[0] - slack and layer[1] >= canvas[1] - slack
              and layer[2] <= canvas[2] + slack and layer[3] <= canvas[3] + slack)
    return inside and (lw >= FIT * cw or lh >= FIT * ch)


def read(canvas=None) -> dict:
    project = QgsProject.instance()
    root = project.layerTreeRoot()
    canvas_crs = canvas.mapSettings().destinationCrs() if canvas is not None else project.crs()
    layers = [_layer(node, canvas_crs, project) for node in root.findLayers() if node.layer() is not None]
    state = {"project": {"file": project.fileName(), "title": project.title(), "crs": project.crs().authid()},
             "unsaved": project.isDirty(),
             "layers": layers, "order": [lyr["name"] for lyr in layers],
             "render_order": [lyr.name() for lyr in root.layerOrder()]}
    if canvas is not None:
        extent = rect(canvas.extent())
        state["canvas"] = {"extent": extent, "scale": num(canvas.scale(), 1), "crs": canvas_crs.authid(),
                           "fits": [lyr["name"] for lyr in layers if fits(extent, lyr["canvas_extent"])]}
    return state


def public(state: dict) -> dict:
    """What the MCP server and the state query see: ids and derived extents are internal."""
    return {**state, "layers": [{k: v for k, v in lyr.items() if k not in ("id", "canvas_extent")}
                                for lyr in state["layers"]]}


# -- milestones --------------------------------------------------------------------------------------
LAYER_FIELDS = {  # a layer's field -> the event its change is (payload: the field and old_<field>)
    "crs": "layer_crs_changed", "color": "layer_color_changed", "unit": "symbol_unit_changed",
    "opacity": "layer_opacity_changed", "notes": "layer_notes_changed", "visible": "layer_visibility_changed",
    "name": "layer_renamed", "renderer": "layer_renderer_changed",
}


def diff(old: dict, new: dict):
    op, np_ = old["project"], new["project"]
    if np_["crs"] != op["crs"]:
        yield "project_crs_changed", {"crs": np_["crs"], "old_crs": op["crs"]}
    if np_["title"] != op["title"]:
        yield "project_title_changed", {"title": np_["title"], "old_title": op["title"]}
    old_by_id = {lyr["id"]: lyr for lyr in old["layers"]}
    new_by_id = {lyr["id"]: lyr for lyr in new["layers"]}
    for lid, lyr in old_by_id.items():
        if lid not in new_by_id:
            yield "layer_removed", {"layer": lyr["name"], "type": lyr["type"], "source": lyr["source"],
                                    "layers": new["order"]}
    for lid, lyr in new_by_id.items():
        was = old_by_id.get(lid)
        if was is None:
            yield "layer_added", {"layer": lyr["name"], "type": lyr["type"], "provider": lyr["provider"],
                                  "source": lyr["source"], "valid": lyr["valid"], "crs": lyr["crs"],
                                  "features": lyr.get("features"), "layers": new["order"]}
            continue
        for field, event in LAYER_FIELDS.items():
            if was.get(field) != lyr.get(field):
                yield event, {"layer": lyr["name"], field: lyr.get(field), f"old_{field}": was.get(field),
                              "type": lyr["type"]}
    kept_old = [lyr["id"] for lyr in old["layers"] if lyr["id"] in new_by_id]
    kept_new = [lyr["id"] for lyr in new["layers"] if lyr["id"] in old_by_id]
    if kept_old != kept_new:
        yield "layer_order_changed", {"order": new["order"], "old_order": old["order"]}
    elif new["render_order"] != old["render_order"] and set(new["render_order"]) == set(old["render_order"]):
        yield "layer_order_changed", {"order": new["order"], "old_order": old["order"],
                                      "render_order": new["render_order"], "old_render_order": old["render_order"]}
    oc, nc = old.get("canvas"), new.get("canvas")
    if oc and nc and (oc["extent"] != nc["extent"] or oc["crs"] != nc["crs"]):
        yield "canvas_extent_changed", {"extent": nc["extent"], "old_extent": oc["extent"], "scale": nc["scale"],
                                        "crs": nc["crs"], "fits": nc["fits"],
                                        "zoomed_to": [n for n in nc["fits"] if n not in oc["fits"]]}
