"""QGIS's state as plain data, and the milestones between two reads.

`read()` takes what a person or an agent can change from the running QGIS, every record by an id QGIS keeps
unique: the project (file, title, CRS, metadata, ...), every layer by its id (name, source, CRS, opacity,
visibility, notes, its place in the Layers panel as the id of the layer below it and its group, for a
single-symbol vector layer its colour and its symbol's unit), the Layers panel's groups and the map canvas
(extent, scale, which layers it is zoomed to). `read(full=True)`, what the state query takes, adds what only the
final comparison needs: each layer's whole style (renderer, labels, rendering, fields' configuration, ...) read
from the style QGIS itself exports, its attribute fields, a digest of its features and whether it is being
edited; the project's stored properties (every setting of Project Properties), print layouts and their items,
spatial bookmarks, map themes, relations and annotations. `diff(old, new)` turns two reads into events. Runs on
QGIS's main thread.
"""

from __future__ import annotations

import hashlib
import re

from qgis.core import (QgsCoordinateTransform, QgsLayerNotesUtils, QgsMapLayer, QgsProject, QgsReadWriteContext,
                       QgsRectangle, QgsSymbolLayerUtils, QgsUnitTypes, QgsVectorLayer)

# the symbol units by the names QGIS's unit selector shows (and the templates use)
UNITS = {QgsUnitTypes.RenderMillimeters: "Millimeters", QgsUnitTypes.RenderPoints: "Points",
         QgsUnitTypes.RenderPixels: "Pixels", QgsUnitTypes.RenderMetersInMapUnits: "Meters at Scale",
         QgsUnitTypes.RenderMapUnits: "Map Units", QgsUnitTypes.RenderInches: "Inches"}
GEOMETRIES = {0: "point", 1: "line", 2: "polygon", 3: "unknown", 4: "null"}  # QgsWkbTypes.GeometryType
FIT = 0.9  # a canvas "zoomed to" a layer: shows all of it, and it spans this share of the canvas's width or height
MAX_FEATURES = 20000  # a layer's features digest reads at most these (the tasks' layers hold a handful)
# the scopes of the project's stored properties (QGIS has no call that lists them): those QGIS 3.22 and its
# Project Properties dialog write, and the server (OWS) settings of its QGIS Server tab
PROPERTY_SCOPES = ("Digitizing", "Gui", "Identify", "Legend", "Macros", "Measure", "Measurement", "PAL", "Paths",
                   "PositionPrecision", "RequiredLayers", "SpatialRefSys", "Variables", "DBManager", "Tracking",
                   "WMSServiceCapabilities", "WMSServiceTitle", "WMSServiceAbstract", "WMSKeywordList",
                   "WMSOnlineResource", "WMSContactOrganization", "WMSContactPerson", "WMSContactMail",
                   "WMSContactPhone", "WMSContactPosition", "WMSFees", "WMSAccessConstraints", "WMSUrl",
                   "WMSExtent", "WMSCrsList", "WMSEpsgList", "WMSImageQuality", "WMSMaxAtlasFeatures",
                   "WMSDefaultMapUnitsPerMm", "WMSPrecision", "WMSSegmentizeFeatureInfoGeometry",
                   "WMSUseLayerIDs", "WMSAddWktGeometry", "WMSFeatureInfoUseAttributeFormSettings",
                   "WMSRestrictedComposers", "WMSRestrictedLayers", "WMSMaxWidth", "WMSMaxHeight", "WMSServiceName",
                   "WMSRootName", "WMTSLayers", "WMTSGrids", "WMTSUrl", "WMTSMinScale", "WFSLayers", "WFSTLayers",
                   "WFSUrl", "WFSLayersPrecision", "WCSLayers", "WCSUrl", "WMSInspire", "WMSDefaultMapUnitScale")


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


def colour(c) -> str:
    """#rrggbb, or #aarrggbb when the colour is not opaque."""
    return c.name().lower() if c.alpha() == 255 else c.name(c.HexArgb).lower()


def _single_symbol(layer):
    renderer = layer.renderer() if isinstance(layer, QgsVectorLayer) else None
    return renderer.symbol() if renderer is not None and renderer.type() == "singleSymbol" else None


def _symbol(layer) -> dict:
    renderer = layer.renderer()
    out = {"renderer": renderer.type() if renderer else None}
    symbol = _single_symbol(layer)
    if symbol is not None:
        unit = symbol.outputUnit()
        out.update(color=colour(symbol.color()), unit=UNITS.get(unit, QgsUnitTypes.encodeUnit(unit) or "mixed"))
    return out


def _tree_place(root) -> dict[str, dict]:
    """Each layer's place in the Layers panel: the id of the layer below it (top down, groups flattened; "" for
    the last) and the path of the group it sits in ("" at the top level)."""
    nodes = [n for n in root.findLayers() if n.layer() is not None]
    place = {}
    for i, node in enumerate(nodes):
        groups, parent = [], node.parent()
        while parent is not None and parent is not root and parent.parent() is not None:
            groups.append(parent.name())
            parent = parent.parent()
        place[node.layerId()] = {"below": nodes[i + 1].layerId() if i + 1 < len(nodes) else "",
                                 "group": "/".join(reversed(groups)), "visible": node.itemVisibilityChecked()}
    return place


def _layer(layer, place: dict | None, canvas_crs, project, full: bool) -> dict:
    kind = {QgsMapLayer.VectorLayer: "vector", QgsMapLayer.RasterLayer: "raster"}.get(layer.type(), "other")
    out = {"id": layer.id(), "name": layer.name(), "type": kind, "provider": layer.providerType(),
           "source": layer.source(), "crs": layer.crs().authid(), "valid": layer.isValid(),
           # a layer kept out of the Layers panel has no place, and no checkbox
           "visible": place["visible"] if place else None, "below": place["below"] if place else None,
           "group": place["group"] if place else None,
           "opacity": num(layer.opacity() * 100, 2), "notes": plain(QgsLayerNotesUtils.layerNotes(layer)),
           "extent": rect(layer.extent())}
    if kind == "vector":
        out.update(_symbol(layer), features=layer.featureCount(),
                   geometry=GEOMETRIES.get(layer.geometryType(), str(layer.geometryType())))
    elif kind == "raster" and layer.renderer() is not None:
        out["renderer"] = layer.renderer().type()
    if full:
        out["style"] = style(layer)
        if kind == "vector":
            out.update(attributes=[f"{f.name()}:{f.typeName()}" for f in layer.fields()], data=features_digest(layer),
                       editing=layer.isEditable())
    try:
        xform = QgsCoordinateTransform(layer.crs(), canvas_crs, project)
        out["canvas_extent"] = rect(xform.transformBoundingBox(layer.extent()))
    except Exception:
        out["canvas_extent"] = None
    return out


# -- a layer's whole style, as QGIS exports it ----------------------------------------------------------------
# the style categories compared: how the layer is drawn and labelled. Left out: fields' widgets, forms, the
# attribute table's columns, actions, map tips and geometry checks (applying Layer Properties writes QGIS's defaults
# for all of them, a change in name only) and custom properties (the notes, compared on their own)
STYLE_CATEGORIES = ("Symbology", "Symbology3D", "Labeling", "Rendering", "Legend", "Temporal", "Elevation", "Diagrams")


def style(layer) -> dict[str, str]:
    """The layer's style (how it is drawn and labelled: its renderer and symbols, labels, scale visibility, blending,
    simplification, legend, temporal settings, diagrams), flattened from the XML QGIS exports for it into
    path -> value. What other fields of the layer record already hold is left out, so that one change is one
    difference: the layer's opacity, and a single symbol's colour and unit wherever a symbol layer holds the
    symbol's own (a symbol layer whose colour or unit differs from the symbol's stays in). The `prop` elements
    restate each symbol layer's `Option` map (QGIS 3.22 writes both) and are left out too; so are diagram
    settings while no diagram is enabled (applying Layer Properties writes a disabled default one)."""
    from qgis.PyQt.QtXml import QDomDocument

    categories = QgsMapLayer.StyleCategories()
    for name in STYLE_CATEGORIES:
        categories |= getattr(QgsMapLayer, name, 0)
    doc = QDomDocument()
    layer.exportNamedStyle(doc, QgsReadWriteContext(), categories)
    flat: dict[str, str] = {}
    _flatten(doc.documentElement(), "", flat)
    diagrams = any(p.endswith("DiagramCategory@enabled") and v == "1" for p, v in flat.items())
    symbol = _single_symbol(layer)
    same_colour = QgsSymbolLayerUtils.encodeColor(symbol.color()) if symbol is not None else None
    same_unit = QgsUnitTypes.encodeUnit(symbol.outputUnit()) if symbol is not None else None
    out = {}
    for path, value in flat.items():
        leaf = path.rsplit("/", 1)[-1]
        if path in ("/layerOpacity", "/pipe/rasterrenderer@opacity") or path.startswith("/customproperties"):
            continue
        top = path.split("/", 2)[1] if path.startswith("/") else ""  # "@labelsEnabled": an attribute of the root
        if not diagrams and "Diagram" in top:
            continue
        if path.startswith("/renderer-v2/symbols/symbol/layer") and "/data_defined" not in path:
            key = leaf[len("Option["):-1] if leaf.startswith("Option[") else ""
            if key in ("color", "line_color") and value == same_colour:
                continue
            if key.endswith("_unit") and value == same_unit:
                continue
        out[path] = value
    return out


def _flatten(elem, path: str, out: dict, named: str = "") -> None:
    """An element's attributes and text by path; its children by tag, told apart by the attribute that names each
    among its siblings (an Option's name, a field's), else by their index. An Option with a value is one entry."""
    attrs = elem.attributes()
    if elem.tagName() == "Option" and elem.hasAttribute("value"):
        out[path] = elem.attribute("value")
        return
    for i in range(attrs.count()):
        a = attrs.item(i).toAttr()
        if a.name() != named and not (elem.tagName() == "qgis" and a.name() in ("version", "styleCategories")):
            out[f"{path}@{a.name()}"] = a.value()
    children, text = [], ""
    child = elem.firstChild()
    while not child.isNull():
        if child.isElement():
            if child.toElement().tagName() != "prop":
                children.append(child.toElement())
        elif child.isText() or child.isCDATASection():
            text += child.nodeValue()
        child = child.nextSibling()
    if text.strip() and not children:
        out[path or "/"] = text
    by_tag: dict[str, list] = {}
    for c in children:
        by_tag.setdefault(c.tagName(), []).append(c)
    for tag, group in by_tag.items():
        label = _naming_attr(group)
        for i, c in enumerate(group):
            step = f"{tag}[{c.attribute(label)}]" if label else f"{tag}[{i}]" if len(group) > 1 else tag
            _flatten(c, f"{path}/{step}", out, label)


def _naming_attr(siblings: list) -> str:
    """The attribute that tells siblings of one tag apart (an Option's name, a field's): set on each, all different."""
    for attr in ("name", "field", "k"):
        values = [c.attribute(attr) for c in siblings]
        if all(values) and len(set(values)) == len(values) and (len(siblings) > 1 or siblings[0].tagName() == "Option"):
            return attr
    return ""


def features_digest(layer) -> str:
    """A digest of the layer's features (ids, attributes, geometry), edits not yet saved included."""
    h = hashlib.sha1()
    for i, f in enumerate(sorted(layer.getFeatures(), key=lambda f: f.id())):
        if i >= MAX_FEATURES:
            h.update(b"...")
            break
        h.update(repr((f.id(), [str(v) for v in f.attributes()],
                       f.geometry().asWkt(6) if f.hasGeometry() else "")).encode())
    return h.hexdigest()[:16]


# -- the project ------------------------------------------------------------------------------------------------
# stored properties that read the same as no entry at all (QGIS's defaults for them, which Project Properties writes
# out when it is applied): left out, as are entries stored empty
PROPERTY_DEFAULTS = {"PositionPrecision/DegreeFormat": "MU", "WMTSLayers/Project": "false",
                     "Legend/filterByMap": "false"}


def _properties(project) -> dict[str, object]:
    """The project's stored properties (what Project Properties sets: the canvas and selection colours, units,
    ellipsoid, path storage, precision, variables, the server settings, ...), "Scope/key/subkey" -> value. An entry
    stored empty, or with the value QGIS reads when there is none (PROPERTY_DEFAULTS), is left out: applying Project
    Properties writes them out, a change in name only. The measurement units and the ellipsoid are the ones in
    effect (an empty unit means the user's default, which the dialog then writes out)."""
    from qgis.core import QgsUnitTypes

    out = {}

    def walk(scope: str, key: str) -> None:
        for entry in project.entryList(scope, key):
            path = f"{key}{entry}"
            value, ok = project.readEntry(scope, path)
            if value == "":
                values, _ = project.readListEntry(scope, path)
                value = values or value
            out[f"{scope}{path}"] = value
        for sub in project.subkeyList(scope, key):
            walk(scope, f"{key}{sub}/")

    for scope in PROPERTY_SCOPES:
        walk(scope, "/")
    out = {k: v for k, v in out.items() if v not in ("", []) and PROPERTY_DEFAULTS.get(k) != v}
    out.update({"Measurement/DistanceUnits": QgsUnitTypes.encodeUnit(project.distanceUnits()),
                "Measurement/AreaUnits": QgsUnitTypes.encodeUnit(project.areaUnits()),
                "Measure/Ellipsoid": project.ellipsoid()})
    return dict(sorted(out.items()))


def _project(project, root) -> dict:
    meta = project.metadata()
    custom = [layer.id() for layer in root.customLayerOrder()] if root.hasCustomLayerOrder() else None
    return {"file": project.fileName(), "title": project.title(), "crs": project.crs().authid(),
            "author": meta.author(), "abstract": meta.abstract(), "home_path": project.presetHomePath(),
            "evaluate_default_values": project.evaluateDefaultValues(),
            "trust_layer_metadata": project.trustLayerMetadata(), "auto_transaction": project.autoTransaction(),
            "snapping": project.snappingConfig().enabled(), "custom_layer_order": custom}


def _groups(root) -> list[dict]:
    """The Layers panel's groups top down (a group has no id, and two may share a name: the list is one value)."""
    out = []

    def walk(node, prefix: str) -> None:
        for child in node.children():
            if child.nodeType() == child.NodeGroup:
                path = f"{prefix}{child.name()}"
                out.append({"path": path, "visible": child.itemVisibilityChecked(), "layers": len(child.findLayers())})
                walk(child, path + "/")

    walk(root, "")
    return out


def _layouts(project) -> list[dict]:
    from qgis.core import QgsApplication, QgsLayoutItem
    from qgis.PyQt.QtXml import QDomDocument

    registry = QgsApplication.layoutItemRegistry()
    out = []
    for layout in project.layoutManager().layouts():
        items = []
        for item in layout.items():
            if not isinstance(item, QgsLayoutItem) or item.type() == 65638:  # QgsLayoutItemPage: in `pages`
                continue
            doc = QDomDocument()
            element = doc.createElement("item")
            item.writeXml(element, doc, QgsReadWriteContext())
            doc.appendChild(element)
            meta = registry.itemMetadata(item.type())
            items.append({"uuid": item.uuid(), "type": meta.visibleName() if meta else str(item.type()),
                          "label": item.id(), "digest": hashlib.sha1(doc.toString().encode()).hexdigest()[:16]})
        pages = layout.pageCollection()
        out.append({"name": layout.name(), "kind": type(layout).__name__,
                    "pages": [[num(p.pageSize().width(), 2), num(p.pageSize().height(), 2)]
                              for p in pages.pages()], "items": items})
    return out


def _extras(project) -> dict:
    bookmarks = [{"id": b.id(), "name": b.name(), "group": b.group(), "extent": rect(b.extent()),
                  "crs": b.extent().crs().authid()} for b in project.bookmarkManager().bookmarks()]
    themes = project.mapThemeCollection()
    map_themes = [{"name": name, "layers": sorted(r.layerId() for r in themes.mapThemeState(name).layerRecords())}
                  for name in themes.mapThemes()]
    relations = [{"id": rid, "name": r.name(), "referencing": r.referencingLayerId(),
                  "referenced": r.referencedLayerId()} for rid, r in project.relationManager().relations().items()]
    annotations = [{"id": iid, "type": item.type()} for iid, item in project.mainAnnotationLayer().items().items()]
    annotations += [{"id": f"legacy-{i}", "type": type(a).__name__}
                    for i, a in enumerate(project.annotationManager().annotations())]
    return {"bookmarks": bookmarks, "map_themes": map_themes, "relations": relations, "annotations": annotations}


def read(canvas=None, full: bool = False) -> dict:
    project = QgsProject.instance()
    root = project.layerTreeRoot()
    canvas_crs = canvas.mapSettings().destinationCrs() if canvas is not None else project.crs()
    place = _tree_place(root)
    tree_ids = list(place)
    others = sorted(lid for lid in project.mapLayers() if lid not in place)
    layers = [_layer(project.mapLayer(lid), place.get(lid), canvas_crs, project, full) for lid in tree_ids + others]
    state = {"project": _project(project, root), "unsaved": project.isDirty(),
             "layers": layers, "groups": _groups(root),
             "order": [lyr["name"] for lyr in layers if lyr["id"] in place],
             "render_order": [lyr.id() for lyr in root.layerOrder()]}
    if full:
        state.update(properties=_properties(project), layouts=_layouts(project), **_extras(project))
    if canvas is not None:
        extent = rect(canvas.extent())
        state["canvas"] = {"extent": extent, "scale": num(canvas.scale(), 1), "crs": canvas_crs.authid(),
                           "fits": [lyr["name"] for lyr in layers if fits(extent, lyr["canvas_extent"])]}
    return state


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


INTERNAL = ("canvas_extent",)


def public(state: dict) -> dict:
    """What the MCP server and the state query see: derived extents and the render order are internal."""
    return {**{k: v for k, v in state.items() if k != "render_order"},
            "layers": [{k: v for k, v in lyr.items() if k not in INTERNAL} for lyr in state["layers"]]}


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
            yield "layer_removed", {"layer": lyr["name"], "id": lid, "type": lyr["type"], "source": lyr["source"],
                                    "layers": new["order"]}
    for lid, lyr in new_by_id.items():
        was = old_by_id.get(lid)
        if was is None:
            yield "layer_added", {"layer": lyr["name"], "id": lid, "type": lyr["type"], "provider": lyr["provider"],
                                  "source": lyr["source"], "valid": lyr["valid"], "crs": lyr["crs"],
                                  "features": lyr.get("features"), "layers": new["order"]}
            continue
        for field, event in LAYER_FIELDS.items():
            if was.get(field) != lyr.get(field):
                yield event, {"layer": lyr["name"], "id": lid, field: lyr.get(field), f"old_{field}": was.get(field),
                              "type": lyr["type"]}
    tree_old = [lyr["id"] for lyr in old["layers"] if lyr["below"] is not None]
    tree_new = [lyr["id"] for lyr in new["layers"] if lyr["below"] is not None]
    kept_old = [lid for lid in tree_old if lid in new_by_id]
    kept_new = [lid for lid in tree_new if lid in old_by_id]
    if kept_old != kept_new:
        yield "layer_order_changed", {"order": new["order"], "old_order": old["order"], "ids": tree_new}
    elif new["render_order"] != old["render_order"] and set(new["render_order"]) == set(old["render_order"]):
        names = {lid: lyr["name"] for lid, lyr in new_by_id.items()}
        yield "layer_order_changed", {"order": new["order"], "old_order": old["order"], "ids": tree_new,
                                      "render_order": [names.get(i, i) for i in new["render_order"]],
                                      "old_render_order": [names.get(i, i) for i in old["render_order"]]}
    oc, nc = old.get("canvas"), new.get("canvas")
    if oc and nc and (oc["extent"] != nc["extent"] or oc["crs"] != nc["crs"]):
        yield "canvas_extent_changed", {"extent": nc["extent"], "old_extent": oc["extent"], "scale": nc["scale"],
                                        "crs": nc["crs"], "fits": nc["fits"],
                                        "zoomed_to": [n for n in nc["fits"] if n not in oc["fits"]]}
