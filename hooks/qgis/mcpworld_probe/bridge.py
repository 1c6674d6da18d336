"""The QGIS bridge's methods: what the MCP server can do, done the way QGIS's own GUI does it.

Each runs on QGIS's main thread (probe_runtime/bridge_server.py posts it there) through the same objects
the GUI changes: the project, its layer tree, the layers' renderers, the map canvas, and QGIS's own map
renderer task for exports. So a call shows in the GUI and fires the same milestones as the same action by
hand. There is deliberately no "run Python" method: code in QGIS's interpreter could reach the probe.
"""

from __future__ import annotations

import os

from qgis.core import (QgsApplication, QgsCoordinateReferenceSystem, QgsLayerNotesUtils, QgsMapRendererTask,
                       QgsProject, QgsRasterLayer, QgsVectorLayer)
from qgis.PyQt.QtCore import QSize, QUrl
from qgis.PyQt.QtGui import QColor
from qgis.utils import iface

from . import state as qgis_state
from .probe_bridge_server import BridgeError

pending_export: dict = {}  # the size of the bridge's export under way (the probe reports it with the task)
UNIT_NAMES = {name.lower(): unit for unit, name in qgis_state.UNITS.items()}
EXPORT_FORMATS = {"png": "PNG", "jpg": "JPG", "jpeg": "JPG", "tif": "TIF", "tiff": "TIF", "bmp": "BMP"}


def _project() -> QgsProject:
    return QgsProject.instance()


def _layer(name: str):
    """A layer by its name, or by its id where two layers share a name."""
    found = _project().mapLayersByName(name)
    if len(found) > 1:
        raise BridgeError(f"{len(found)} layers are named '{name}': name one by its id "
                          f"({', '.join(layer.id() for layer in found)})")
    if not found and _project().mapLayer(str(name)) is not None:
        return _project().mapLayer(str(name))
    if not found:
        names = [node.name() for node in _project().layerTreeRoot().findLayers()]
        raise BridgeError(f"no layer named '{name}' (layers: {', '.join(names) or 'none'})")
    return found[0]


def _crs(code: str) -> QgsCoordinateReferenceSystem:
    crs = QgsCoordinateReferenceSystem(code)
    if not crs.isValid():
        raise BridgeError(f"'{code}' is not a coordinate reference system QGIS knows (e.g. EPSG:3857)")
    return crs


def _path(p: dict, key: str = "path", must_exist: bool = True) -> str:
    path = os.path.abspath(os.path.expanduser(str(p.get(key) or "")))
    if not p.get(key):
        raise BridgeError(f"'{key}' is required")
    if must_exist and not os.path.exists(path):
        raise BridgeError(f"no such file: {path}")
    return path


def _symbol(layer):
    renderer = layer.renderer() if hasattr(layer, "renderer") else None
    if renderer is None or renderer.type() != "singleSymbol":
        raise BridgeError(f"layer '{layer.name()}' has no single symbol (renderer: "
                          f"{renderer.type() if renderer else 'none'})")
    return renderer.symbol()


def _restyled(layer) -> None:
    """What the Layer Styling panel does after a change: repaint, refresh the legend, mark the project."""
    layer.triggerRepaint()
    layer.emitStyleChanged()
    iface.layerTreeView().refreshLayerSymbology(layer.id())
    _project().setDirty(True)


# -- reading ---------------------------------------------------------------------------------------
def m_state(p):
    return qgis_state.public(qgis_state.read(iface.mapCanvas()))


def m_query_state(p):
    """Everything the final comparison reads (state.read(full=True)): the runner's state query, not a tool."""
    return qgis_state.public(qgis_state.read(iface.mapCanvas(), full=True))


def m_layer(p):
    lid = _layer(p["name"]).id()
    return next(lyr for lyr in m_state(p)["layers"] if lyr["id"] == lid)


def m_features(p):
    layer = _layer(p["name"])
    if not isinstance(layer, QgsVectorLayer):
        raise BridgeError(f"layer '{layer.name()}' is not a vector layer")
    limit = int(p.get("limit") or 50)
    out = []
    for i, f in enumerate(layer.getFeatures()):
        if i >= limit:
            break
        out.append({"id": f.id(), "attributes": dict(zip(layer.fields().names(), [
            v if isinstance(v, (int, float, str, type(None))) else str(v) for v in f.attributes()])),
            "geometry": f.geometry().asWkt(6)})
    return {"layer": layer.name(), "count": layer.featureCount(), "features": out}


# -- projects --------------------------------------------------------------------------------------
def m_new_project(p):
    iface.newProject(False)  # no "save changes?" prompt: the bridge's caller asked for it
    return m_state(p)["project"]


def m_open_project(p):
    path = _path(p)
    if not iface.addProject(path):
        raise BridgeError(f"QGIS could not open {path}")
    return m_state(p)["project"]


def m_save_project(p):
    project = _project()
    path = _path(p, must_exist=False) if p.get("path") else project.fileName()
    if not path:
        raise BridgeError("the project has never been saved: give a path")
    if not path.endswith((".qgz", ".qgs")):
        raise BridgeError("a project file ends in .qgz or .qgs")
    if not project.write(path):
        raise BridgeError(f"QGIS could not save the project: {project.error()}")
    return m_state(p)["project"]


def m_set_project_crs(p):
    _project().setCrs(_crs(p["crs"]))
    return {"crs": _project().crs().authid()}


# -- layers ----------------------------------------------------------------------------------------
def m_add_vector_layer(p):
    path = _path(p)
    source = path + (f"|layername={p['layer']}" if p.get("layer") else "")
    layer = QgsVectorLayer(source, p.get("name") or os.path.splitext(os.path.basename(path))[0], "ogr")
    if not layer.isValid():
        raise BridgeError(f"QGIS cannot read a vector layer from {source}")
    _project().addMapLayer(layer)
    return {"name": layer.name(), "features": layer.featureCount(), "crs": layer.crs().authid()}


def m_add_raster_layer(p):
    path = _path(p)
    layer = QgsRasterLayer(path, p.get("name") or os.path.splitext(os.path.basename(path))[0])
    if not layer.isValid():
        raise BridgeError(f"QGIS cannot read a raster layer from {path}")
    _project().addMapLayer(layer)
    return {"name": layer.name(), "width": layer.width(), "height": layer.height(), "crs": layer.crs().authid()}


def m_remove_layer(p):
    layer = _layer(p["name"])
    _project().removeMapLayer(layer.id())
    return {"removed": p["name"]}


def m_set_layer_order(p):
    """Reorder the Layers panel top down, as dragging does: each named layer's node moves, in order, to the
    top of the list (the ones not named keep their order below)."""
    names = list(p.get("order") or [])
    root = _project().layerTreeRoot()
    nodes = [root.findLayer(_layer(n).id()) for n in names]
    if len(set(names)) != len(names):
        raise BridgeError("a layer is named twice")
    for node in reversed(nodes):
        parent = node.parent()
        clone = node.clone()
        root.insertChildNode(0, clone)
        parent.removeChildNode(node)
    root.setHasCustomLayerOrder(False)
    return {"order": [n.name() for n in root.findLayers()]}


def m_set_layer_color(p):
    layer = _layer(p["name"])
    color = QColor(str(p["color"]))
    if not color.isValid():
        raise BridgeError(f"'{p['color']}' is not a colour (e.g. #ff8800)")
    _symbol(layer).setColor(color)
    _restyled(layer)
    return {"name": layer.name(), "color": color.name()}


def m_set_symbol_unit(p):
    layer = _layer(p["name"])
    unit = UNIT_NAMES.get(str(p["unit"]).lower())
    if unit is None:
        raise BridgeError(f"unknown unit '{p['unit']}' (one of: {', '.join(qgis_state.UNITS.values())})")
    _symbol(layer).setOutputUnit(unit)
    _restyled(layer)
    return {"name": layer.name(), "unit": qgis_state.UNITS[unit]}


def m_set_layer_opacity(p):
    layer = _layer(p["name"])
    percent = float(p["opacity"])
    if not 0 <= percent <= 100:
        raise BridgeError("opacity is a percentage, 0 to 100")
    layer.setOpacity(percent / 100)
    _restyled(layer)
    return {"name": layer.name(), "opacity": percent}


def m_set_layer_notes(p):
    layer = _layer(p["name"])
    QgsLayerNotesUtils.setLayerNotes(layer, str(p.get("notes") or ""))
    _project().setDirty(True)
    return {"name": layer.name(), "notes": qgis_state.plain(QgsLayerNotesUtils.layerNotes(layer))}


def m_set_layer_crs(p):
    layer = _layer(p["name"])
    layer.setCrs(_crs(p["crs"]))
    _restyled(layer)
    return {"name": layer.name(), "crs": layer.crs().authid()}


def m_set_layer_visibility(p):
    layer = _layer(p["name"])
    _project().layerTreeRoot().findLayer(layer.id()).setItemVisibilityChecked(bool(p["visible"]))
    return {"name": layer.name(), "visible": bool(p["visible"])}


def m_rename_layer(p):
    layer = _layer(p["name"])
    layer.setName(str(p["new_name"]))
    return {"name": layer.name()}


# -- the map canvas --------------------------------------------------------------------------------
def m_zoom_to_layer(p):
    layer = _layer(p["name"])
    view = iface.layerTreeView()
    view.setCurrentLayer(layer)
    iface.zoomToActiveLayer()  # the Layers panel's "Zoom to Layer"
    return m_state(p)["canvas"]


def m_zoom_full(p):
    iface.zoomFull()
    return m_state(p)["canvas"]


def m_export_map(p):
    """Render the canvas's map to a file through QGIS's own map renderer task, as Project > Import/Export >
    Export Map to Image / to PDF do: the same map settings, at the asked size in pixels."""
    path = _path(p, must_exist=False)
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    fmt = "PDF" if ext == "pdf" else EXPORT_FORMATS.get(ext)
    if fmt is None:
        raise BridgeError(f"cannot tell the format from '{path}' (pdf, {', '.join(sorted(EXPORT_FORMATS))})")
    if not os.path.isdir(os.path.dirname(path)):
        raise BridgeError(f"no such folder: {os.path.dirname(path)}")
    width, height = int(p["width"]), int(p["height"])
    if not (0 < width <= 20000 and 0 < height <= 20000):
        raise BridgeError("width and height are pixels, 1 to 20000")
    settings = iface.mapCanvas().mapSettings()
    settings.setOutputSize(QSize(width, height))
    task = QgsMapRendererTask(settings, path, fmt)
    description = task.description()
    pending_export.update(width=width, height=height, dpi=round(settings.outputDpi()))
    try:
        QgsApplication.taskManager().addTask(task)
        finished = task.waitForFinished(60000)
    finally:
        pending_export.clear()
    if not finished or not os.path.isfile(path):
        raise BridgeError(f"QGIS did not write {path}")
    # what QGIS's own export says when it is done (the probe reads where the map went from it)
    url = QUrl.fromLocalFile(path).toString()
    iface.messageBar().pushSuccess("Save as PDF" if fmt == "PDF" else "Save as image",
                                   f'Successfully saved map to <a href="{url}">{path}</a>')
    return {"path": path, "format": fmt, "width": width, "height": height, "task": description}


METHODS = {name[2:]: fn for name, fn in globals().items() if name.startswith("m_") and callable(fn)}
