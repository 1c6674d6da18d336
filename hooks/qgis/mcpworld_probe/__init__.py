"""mcpworld's QGIS probe: started by QGIS itself (`qgis --code .../start.py`, once the main window and the
project given on the command line are loaded), it reports semantic milestones to the evaluator and serves
the bridge the QGIS MCP server calls.

On QGIS's own notifications (the project's layers, CRS, layer tree and saves; each layer's renderer, style,
opacity, CRS, name and custom properties, where layer notes live; the canvas's extent), after each bridge
call and on a 0.5 s poll, it re-reads the project (state.py) and diffs it against the last read: the
differences are the events. Project loads, new projects and saves come from QGIS's own signals, map exports
from QGIS's map renderer tasks and the message QGIS shows when one has written its file; `ui_ready` from
the canvas's first finished render. All of it runs on QGIS's main thread (Qt signals and timers), never on
the bridge's server thread. Outside mcpworld (no run config) it does nothing.
"""

from __future__ import annotations

import os
import re
import time
import traceback

START = time.monotonic()
POLL_MS = 500
_client = None
_bridge = None
_last: dict | None = None
_watched: set[str] = set()  # layers whose signals are connected
_keep: list = []  # Qt objects (timers, connections' targets) that must outlive start()


# What QGIS's C++ runs through its Python runner on its own (libqgispython and libqgis_app: plugin
# bookkeeping, opening the console and the plugin manager, the project macro calls whose macros then run in
# qgis/utils.py, where the guard judges them): per line one import, one call of a function of qgis.utils,
# the console or the plugin installer with literal arguments only, or a literal assigned to a qgis.utils
# setting. None of them reaches the project (qgis.utils.iface is an attribute, not a call: not allowed).
_STRING = r"""(?:u?'[^'\\\n]*'|u?"[^"\\\n]*")"""
_LITERAL = r"""(?:""" + _STRING + r"""|-?\d+|True|False|None|[A-Za-z_]\w*=(?:True|False|-?\d+))"""
_ARGS = r"""\((?:""" + _LITERAL + r"""(?:\s*,\s*""" + _LITERAL + r""")*)?\)"""
_OWN = re.compile(r"""\s*(?:"""
                  r"""(?:import|from)\s+[\w.]+(?:\s+import\s+[\w*, ]+)?"""
                  r"""|(?:qgis\.utils|console|sys\.path)\.\w+""" + _ARGS +
                  r"""|pyplugin_installer(?:\.instance\(\))?(?:\.\w+)+""" + _ARGS +
                  r"""|qgis\.utils\.\w+\s*=\s*(?:\[(?:""" + _STRING + r"""(?:\s*,\s*""" + _STRING + r""")*)?\]|"""
                  + _LITERAL + r""")"""
                  r"""|'\\n'\.join\(qgis\.utils\.\w+\)|sys\.version|str\(sys\.path\)"""
                  r""")\s*;?\s*""")


def _from_cpp(source: str | None, filename) -> str | None:
    """The guard's rule for Python that QGIS's C++ compiles: its own calls pass, anything else (a Python layer
    action, an expression function) is the surface `python_runner`."""
    if source is not None and all(_OWN.fullmatch(line) for line in source.splitlines() if line.strip()):
        return None
    return "python_runner"


# the imports QGIS's Python console runs as it opens (console/console_sci.py, _init_commands, 3.22)
_CONSOLE_START = frozenset({
    "import sys", "import os", "import re", "import math", "from qgis.core import *", "from qgis.gui import *",
    "from qgis.analysis import *", "from qgis._3d import *", "import processing", "import qgis.utils",
    "from qgis.utils import iface", "from qgis.PyQt.QtCore import *", "from qgis.PyQt.QtGui import *",
    "from qgis.PyQt.QtWidgets import *", "from qgis.PyQt.QtNetwork import *", "from qgis.PyQt.QtXml import *"})


def start() -> None:
    global _client
    from . import probe_inapp

    started = probe_inapp.start(
        os.path.dirname(os.path.abspath(__file__)), ["/usr/share/qgis/python", "/usr/lib/qgis"], from_c=_from_cpp,
        own_lines={"console/console_sci.py": _CONSOLE_START},
        surfaces={"console/console_sci.py": "python_console", "console/console_editor.py": "python_console",
                  "processing/script/ScriptEditorDialog.py": "processing_script",
                  "processing/algs/qgis/FieldPyculator.py": "field_pyculator"})
    if started is None:
        return
    cfg, _client = started
    try:
        _watch(cfg)
    except Exception:  # the runner stops waiting for the app at once, with the trace (a port taken, ...)
        _error("start")


def _watch(cfg: dict) -> None:
    """The bridge served, the app's notifications followed, the first state read."""
    global _bridge
    from qgis.core import QgsApplication, QgsProject
    from qgis.PyQt.QtCore import QTimer
    from qgis.PyQt.QtWidgets import QApplication
    from qgis.utils import iface

    from . import bridge
    from .probe_bridge_server import BridgeServer

    poster = _MainThreadPoster()
    _keep.append(poster)
    _bridge = BridgeServer(bridge.METHODS, cfg["secrets"]["bridge"], poster.post,
                           on_refused=lambda peer: _emit("suspected_forgery", {
                               "reason": "a bridge request without the run's secret", "peer": peer}),
                           before_call=lambda method: _rescan(f"before:{method}"),
                           after_call=lambda method: _rescan(f"bridge:{method}"),
                           flush=lambda: _client.flush(5.0))
    _bridge.serve(cfg.get("bind_host", "127.0.0.1"), int(cfg["ports"]["bridge"]))

    project, canvas = QgsProject.instance(), iface.mapCanvas()
    iface.mainWindow().showMaximized()
    for signal in (project.layersAdded, project.layersRemoved, project.crsChanged, project.layerTreeRoot().layerOrderChanged,
                   project.layerTreeRoot().customLayerOrderChanged, project.layerTreeRoot().visibilityChanged,
                   project.layerTreeRoot().addedChildren, project.layerTreeRoot().removedChildren,
                   project.metadataChanged, canvas.extentsChanged, canvas.destinationCrsChanged):
        signal.connect(lambda *a: _soon("signal"))
    project.layersAdded.connect(lambda layers: _guard(_watch_layers, "layersAdded"))
    project.projectSaved.connect(_on_saved)
    iface.projectRead.connect(lambda: _on_project("project_loaded"))
    iface.newProjectCreated.connect(lambda: _on_project("project_created"))
    QgsApplication.taskManager().taskAdded.connect(_on_task)
    iface.messageBar().widgetAdded.connect(_on_message)
    canvas.renderStarting.connect(_on_render_starting)
    canvas.mapCanvasRefreshed.connect(_on_refreshed)
    QApplication.instance().focusWindowChanged.connect(lambda *a: _guard(_check_windows, "focusWindowChanged"))
    poll = QTimer()
    poll.timeout.connect(lambda: (_rescan("poll"), _guard(_check_windows, "poll")))
    poll.start(POLL_MS)
    _keep.append(poll)
    _watch_layers()
    _rescan("start")
    _emit("probe_started", {"file": project.fileName(), "layers": (_last or {}).get("order", [])})
    canvas.refresh()  # a render of the loaded project to wait for: one already under way may predate the load


class _MainThreadPoster:
    """Posts a callable from any thread to QGIS's main thread (a queued Qt signal to an object living there)."""

    def __init__(self):
        from qgis.PyQt.QtCore import QObject, pyqtSignal

        class Poster(QObject):
            posted = pyqtSignal(object)

        self._obj = Poster()
        self._obj.posted.connect(lambda fn: fn())  # the object lives on the main thread: queued from elsewhere

    def post(self, fn) -> None:
        self._obj.posted.emit(fn)


def _guard(fn, where: str) -> None:
    """Run a slot's work; an exception escaping a slot would open QGIS's modal Python error window."""
    try:
        fn()
    except Exception:
        _error(where)


def _emit(name: str, payload: dict) -> None:
    if _client is not None:
        _client.emit(name, {**payload, "channel": "api" if _bridge is not None and _bridge.in_call() else "gui"})


def _error(where: str) -> None:
    _emit("probe_error", {"where": where, "trace": traceback.format_exc()[-3000:]})


def _canvas():
    from qgis.utils import iface
    return iface.mapCanvas()


def _rescan(trigger: str) -> None:
    global _last
    from . import state
    try:
        new = state.read(_canvas())
    except Exception:
        return _error(f"read ({trigger})")
    if _last is not None:
        try:
            for name, payload in state.diff(_last, new):
                _emit(name, {**payload, "trigger": trigger})
        except Exception:
            _error(f"diff ({trigger})")
    _last = new


_pending = [False]


def _soon(trigger: str) -> None:
    """A rescan once the notifying code has returned (a signal can come halfway through a change)."""
    if not _pending[0]:
        _pending[0] = True
        from qgis.PyQt.QtCore import QTimer

        def run():
            _pending[0] = False
            _rescan(trigger)
        QTimer.singleShot(0, run)


def _watch_layers() -> None:
    from qgis.core import QgsProject
    for layer in QgsProject.instance().mapLayers().values():
        if layer.id() in _watched:
            continue
        _watched.add(layer.id())
        signals = [layer.rendererChanged, layer.styleChanged, layer.opacityChanged, layer.crsChanged,
                   layer.nameChanged, layer.customPropertyChanged]
        for signal in signals:
            signal.connect(lambda *a: _soon("layer"))
        layer.willBeDeleted.connect(lambda lid=layer.id(): _watched.discard(lid))


def _on_saved() -> None:
    from qgis.PyQt.QtCore import QTimer
    QTimer.singleShot(0, _saved)  # a .qgz is zipped after the signal: look once QGIS is done with it


def _saved() -> None:
    from qgis.core import QgsProject
    try:
        _rescan("saved")
        path = QgsProject.instance().fileName()
        _emit("project_saved", {"path": path, "exists": os.path.isfile(path),
                                "layers": (_last or {}).get("order", []), "crs": QgsProject.instance().crs().authid()})
    except Exception:
        _error("projectSaved")


def _on_project(event: str) -> None:
    from qgis.core import QgsProject
    try:
        _watch_layers()
        _rescan(event)
        project = QgsProject.instance()
        _emit(event, {"path": project.fileName(), "title": project.title(), "crs": project.crs().authid(),
                      "layers": (_last or {}).get("order", [])})
    except Exception:
        _error(event)


# QGIS's windows for one layer's settings, by their titles: (pattern, what they are). The layer is named in the
# title, else it is QGIS's current layer (the Layers panel's context menu acts on it)
LAYER_DIALOGS = ((re.compile(r"^Layer Properties \u2014 (?P<layer>.+?)(?: \u2014 (?P<page>[^\u2014]+))?$"), "properties"),
                 (re.compile(r"^Layer Notes(?: \u2014 (?P<layer>.+))?$"), "notes"),
                 (re.compile(r"^Coordinate Reference System Selector$"), "crs"))
_open_dialogs: dict[int, str] = {}  # the layer windows open at the last look: id(widget) -> title


def _check_windows() -> None:
    """`layer_dialog_opened` for each layer window (Layer Properties and its page, Layer Notes, the layer CRS
    selector, the Layer Styling panel) newly shown, or shown on another page: where a person starts to change a
    layer's settings."""
    from qgis.PyQt.QtWidgets import QApplication

    from qgis.PyQt import sip

    seen: dict[int, tuple[str, str, dict]] = {}  # by the C++ object's address (a Python wrapper may be new)
    for widget in QApplication.topLevelWidgets():
        if not widget.isVisible():
            continue
        title = widget.windowTitle()
        for pattern, kind in LAYER_DIALOGS:
            m = pattern.match(title)
            if m:
                seen[sip.unwrapinstance(widget)] = (title, kind, m.groupdict())
                break
    styling = _styling_dock()
    if styling is not None and styling.isVisible():
        seen[sip.unwrapinstance(styling)] = (f"Layer Styling {_current_name()}", "styling", {})
    for key, (title, kind, groups) in seen.items():
        if _open_dialogs.get(key) != title:
            name = groups.get("layer") or _current_name()
            _emit("layer_dialog_opened", {"layer": name, "id": _layer_id(name), "dialog": kind,
                                          "page": groups.get("page"), "title": title})
    _open_dialogs.clear()
    _open_dialogs.update({key: v[0] for key, v in seen.items()})


def _styling_dock():
    from qgis.PyQt.QtWidgets import QDockWidget
    from qgis.utils import iface
    return iface.mainWindow().findChild(QDockWidget, "LayerStyling")


def _current_name() -> str | None:
    from qgis.utils import iface
    layer = iface.activeLayer()
    return layer.name() if layer is not None else None


def _layer_id(name: str | None) -> str | None:
    from qgis.core import QgsProject
    from qgis.utils import iface
    current = iface.activeLayer()
    if current is not None and current.name() == name:
        return current.id()
    found = QgsProject.instance().mapLayersByName(name) if name else []
    return found[0].id() if len(found) == 1 else None


RENDER_TASKS = ("Saving as image", "Saving as PDF")  # QgsMapRendererTask's own descriptions


def _export_size() -> dict:
    """The size a map export was asked for: from the bridge, or from QGIS's export dialog (its spin boxes),
    which the GUI's task does not expose."""
    from . import bridge
    if bridge.pending_export:
        return bridge.pending_export.copy()
    from qgis.PyQt.QtWidgets import QApplication, QSpinBox
    for widget in QApplication.topLevelWidgets():
        if type(widget).__name__ == "QgsMapSaveDialog" or widget.metaObject().className() == "QgsMapSaveDialog":
            boxes = {b.objectName(): b.value() for b in widget.findChildren(QSpinBox)}
            if "mOutputWidthSpinBox" in boxes:
                return {"width": boxes["mOutputWidthSpinBox"], "height": boxes.get("mOutputHeightSpinBox"),
                        "dpi": boxes.get("mResolutionSpinBox")}
    return {}


def _on_task(task_id: int) -> None:
    from qgis.core import QgsApplication, QgsMapRendererTask
    try:
        task = QgsApplication.taskManager().task(task_id)
        # the GUI's task comes back as a plain QgsTask (no downcast): its description names it
        if task is not None and (isinstance(task, QgsMapRendererTask) or task.description() in RENDER_TASKS):
            info = {"task": task.description(), **_export_size()}
            _emit("map_export_started", info)
            task.taskCompleted.connect(lambda: _emit("map_export_finished", info))
            task.taskTerminated.connect(lambda: _emit("map_export_failed", info))
    except Exception:
        _error("taskAdded")


def _on_message(widget) -> None:
    """QGIS says where an export went in its message bar ("Successfully saved map to <a href=...>"). The
    signal hands over a plain QWidget: the bar's current item is the message itself."""
    try:
        from qgis.utils import iface
        item = iface.messageBar().currentItem()
        if item is None:
            return
        text = f"{item.title()} {item.text()}"
        m = re.search(r'saved map (?:image )?to <a href="([^"]+)"', text, re.I) or \
            re.search(r"saved map (?:image )?to (\S+)", text, re.I)
        if m:
            from qgis.PyQt.QtCore import QUrl
            url = QUrl(m.group(1))
            path = url.toLocalFile() if url.isLocalFile() else m.group(1)
            _emit("map_saved", {"path": path, "exists": os.path.isfile(path), "message": re.sub(r"<[^>]+>", "", text)})
    except Exception:
        _error("messageBar")


_ready = [False]
_rendering = [False]  # a render began after start(): its end is the first frame of the loaded project


def _on_render_starting() -> None:
    _rendering[0] = True


def _on_refreshed() -> None:
    try:
        if _rendering[0] and not _ready[0]:
            _ready[0] = True
            _emit("ui_ready", {"seconds": round(time.monotonic() - START, 2)})
    except Exception:
        _error("mapCanvasRefreshed")
