"""mcpworld's FreeCAD probe: run by FreeCAD itself (`freecad .../start.py`, once the main window is up), it
reports semantic milestones to the evaluator and serves the bridge the FreeCAD MCP server calls.

On FreeCAD's own notifications (its document observer: documents and objects created, changed,
recomputed, deleted, restored; the GUI document observer: edit mode; the main window's workbench
signal; parameter observers on the preferences the tasks change), after each bridge call and on a 0.5 s
poll, it re-reads FreeCAD (state.py) and diffs it against the last read: the differences are the events.
Saves come straight from the document observer (FreeCAD finished writing the file). All of it runs on
FreeCAD's GUI thread (observers and Qt timers), never on the bridge's server thread. Outside mcpworld (no
run config) it does nothing.
"""

from __future__ import annotations

import os
import sys
import time
import traceback

START = time.monotonic()
POLL_MS = 500
_started = False
_client = None
_bridge = None
_last: dict | None = None
_keep: list = []  # observers, timers and Qt objects that must outlive start()


# files of FreeCAD's own Python that evaluate text a user can set: a Path preference (Tools > Edit parameters)
# and an add-on's macro the Addon Manager runs
NOT_GENERATORS = ("Path/PathScripts/PathPreferences.py", "Path/PathScripts/PathSurfaceSupport.py",
                  "AddonManager/AddonManager.py")


def _from_c(source: str | None, filename) -> str | None:
    """FreeCAD's C++ runs Python in strings: every GUI command's doCommand, "<string>". Such a string passes
    when it names no way to compile more itself (`compiles_itself`): the values in it were typed into fields
    of FreeCAD's dialogs, and a flaw in FreeCAD's escaping of them could otherwise make code of a label. A file
    it runs (a macro: PyRun_File compiles it as None) is the agent's unless it is a trusted file (the guard
    lets those pass before this rule)."""
    if source is None:
        return "macro"
    if filename == "<CallTipsList>":  # the console's and macro editor's call tips evaluate the typed expression
        return "python_console"
    if filename != "<string>":
        return "python"
    from .probe_guard import compiles_itself  # loaded before the guard was installed: no compile here

    return "command_string" if compiles_itself(source) else None


def start() -> None:
    global _started, _client
    if _started:
        return
    _started = True
    import FreeCAD as App

    from . import probe_inapp

    probe = os.path.dirname(os.path.abspath(__file__))
    mods = [os.path.join(App.getResourceDir(), "Mod"), os.path.join(App.getHomePath(), "Mod")]
    started = probe_inapp.start(
        probe, [App.getResourceDir(), App.getHomePath()], from_c=_from_c,
        # the Python console compiles through Python's codeop; FreeCAD's own commands and the probe's bridge
        # call Gui.doCommand or C++ commands that do, with their own frame the caller; a command's string
        # calls C++ that runs another's (Std_Save: Gui.SendMsgToActiveView("Save") runs App...save())
        surfaces={"codeop.py": "python_console"}, generator_roots=[*mods, probe], not_generators=NOT_GENERATORS,
        nested_c_strings=True)
    if started is None:
        return
    cfg, _client = started
    try:
        _watch(cfg)
    except Exception:  # the runner stops waiting for ui_ready at once, with the trace (a port taken, ...)
        _error("start")


def _watch(cfg: dict) -> None:
    """The bridge served, FreeCAD's observers attached, the first state read, ui_ready once the loop runs."""
    global _bridge
    import FreeCAD as App
    import FreeCADGui as Gui
    from PySide2 import QtCore

    from . import bridge, state
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

    app_obs, gui_obs = _DocumentObserver(), _GuiObserver()
    App.addDocumentObserver(app_obs)
    Gui.addDocumentObserver(gui_obs)
    param_obs = _ParamObserver()
    for group in {g for g, _, _ in state.PARAMS.values()}:
        App.ParamGet(group).Attach(param_obs)
    mw = Gui.getMainWindow()
    mw.workbenchActivated.connect(lambda name: _soon("workbench"))
    poll = QtCore.QTimer()
    poll.timeout.connect(lambda: _rescan("poll"))
    poll.start(POLL_MS)
    _keep.extend([app_obs, gui_obs, param_obs, poll])
    _rescan("start")
    _emit("probe_started", {"documents": [d["name"] for d in (_last or {}).get("documents", [])],
                            "workbench": (_last or {}).get("workbench")})
    QtCore.QTimer.singleShot(0, _ui_ready)  # once the event loop runs: the window and its workbench are up


def _ui_ready() -> None:
    import FreeCADGui as Gui
    # the window maps without a focus widget, and FreeCAD's shortcuts (Ctrl+N, Ctrl+O) then go nowhere
    # until the first click: give the main window the keyboard, as a click in it would
    Gui.getMainWindow().activateWindow()
    Gui.getMainWindow().setFocus()
    _rescan("ready")
    _emit("ui_ready", {"seconds": round(time.monotonic() - START, 2), "workbench": (_last or {}).get("workbench")})


class _MainThreadPoster:
    """Posts a callable from any thread to FreeCAD's GUI thread (a queued Qt signal to an object living there)."""

    def __init__(self):
        from PySide2 import QtCore

        class Poster(QtCore.QObject):
            posted = QtCore.Signal(object)

        self._obj = Poster()
        self._obj.posted.connect(lambda fn: fn())  # the object lives on the GUI thread: queued from elsewhere

    def post(self, fn) -> None:
        self._obj.posted.emit(fn)


def _emit(name: str, payload: dict) -> None:
    if _client is not None:
        _client.emit(name, {**payload, "channel": "api" if _bridge is not None and _bridge.in_call() else "gui"})


def _error(where: str) -> None:
    _emit("probe_error", {"where": where, "trace": traceback.format_exc()[-3000:]})


def _rescan(trigger: str) -> None:
    global _last
    from . import state
    try:
        new = state.read()
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
    """A rescan once the notifying code has returned (an observer is called halfway through a change)."""
    if not _pending[0]:
        _pending[0] = True
        from PySide2 import QtCore

        def run():
            _pending[0] = False
            _rescan(trigger)
        QtCore.QTimer.singleShot(0, run)


def _saved(doc, filename: str) -> None:
    """FreeCAD finished writing a document: what it holds, read now (before any later edit)."""
    try:
        _rescan("saved")
        docs = [d for d in (_last or {}).get("documents", []) if d["name"] == doc.Name]
        objects = docs[0]["objects"] if docs else []
        # what the saved document holds, as object_added describes each
        _emit("document_saved", {"document": doc.Name, "label": doc.Label, "path": str(filename),
                                 "exists": os.path.isfile(str(filename)), "objects": objects})
    except Exception:
        _error("slotFinishSaveDocument")


class _DocumentObserver:
    """FreeCAD's document observer: each notification asks for a rescan once FreeCAD is done."""

    def slotCreatedDocument(self, doc):
        _soon("created_document")

    def slotDeletedDocument(self, doc):
        _soon("deleted_document")

    def slotFinishRestoreDocument(self, doc):
        _soon("restored_document")

    def slotCreatedObject(self, obj):
        _soon("created_object")

    def slotDeletedObject(self, obj):
        _soon("deleted_object")

    def slotChangedObject(self, obj, prop):
        _soon("changed_object")

    def slotRecomputedDocument(self, doc):
        _soon("recomputed")

    def slotFinishSaveDocument(self, doc, filename):
        from PySide2 import QtCore
        QtCore.QTimer.singleShot(0, lambda: _saved(doc, filename))


class _GuiObserver:
    def slotInEdit(self, vp):
        _soon("in_edit")

    def slotResetEdit(self, vp):
        _soon("reset_edit")


class _ParamObserver:
    def onChange(self, group, reason):
        _soon("parameter")
