"""mcpworld's Blender probe: started by Blender itself (`blender --python .../start.py`), it reports
semantic milestones to the evaluator and serves the bridge the Blender MCP server calls.

On every depsgraph update, on message-bus notices (object names, transforms, modes, shading), after each
bridge call and on a 0.25 s poll (windows, views and edit-mode changes notify nothing), it re-reads the
scene and diffs it against the last read (state.py): the differences are the events. Files loaded and
saved come from Blender's own load/save handlers; `ui_ready` from the 3D view's first drawn frame. All of
it runs on Blender's main thread (timers), never on the bridge's server thread. Outside mcpworld (no run
config) it does nothing.
"""

from __future__ import annotations

import ast
import os
import time
import traceback

import bpy

START = time.monotonic()
POLL = 0.25
_client = None
_last: dict | None = None
_owner = object()  # the message-bus subscriptions' owner


# Blender evaluates what is typed into a number field or a modal operator as Python (`<expr as number>`,
# `<string>`, after replacing unit names by factors): plain arithmetic on numbers and math's functions and constants passes, anything else
# (a name, an attribute, a string) is code. Python it compiles from C otherwise: a text block's Run Script
# (filename: the text's path), a driver's expression.
_MATH = frozenset({"pi", "e", "tau", "inf", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "radians",
                   "degrees", "floor", "ceil", "fabs", "pow", "exp", "log", "log10", "log2", "hypot", "fmod",
                   "trunc", "copysign", "factorial", "abs", "round", "min", "max", "int", "float"})
_OPERATORS = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.Load)


def _arithmetic(source: str | None) -> bool:
    try:
        tree = ast.parse(source or "", mode="eval")
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, _OPERATORS):
            continue
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            continue
        if isinstance(node, ast.Name) and node.id in _MATH:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _MATH and not node.keywords:
            continue
        return False
    return True


def _from_c(source: str | None, filename) -> str | None:
    # a number typed into a modal operator (S 2.5 Return) compiles as "<string>"
    if filename in ("<expr as number>", "<expr as str>", "<string>") and _arithmetic(source):
        return None
    return {"<bpy driver>": "driver", "<expr as number>": "number_field", "<expr as str>": "text_field",
            "<expr as intptr>": "python"}.get(filename, "text_editor")


def start() -> None:
    global _client
    from . import probe_inapp

    started = probe_inapp.start(
        os.path.dirname(os.path.abspath(__file__)), [bpy.utils.resource_path("SYSTEM"), bpy.utils.resource_path("LOCAL")],
        from_c=_from_c, surfaces={"modules/console_python.py": "python_console"},
        own_lines={"modules/console_python.py": frozenset({"from mathutils import *", "from math import *"})})
    if started is None:
        return
    cfg, _client = started
    try:
        _watch(cfg)
    except Exception:  # the runner stops waiting for the app at once, with the trace (a port taken, ...)
        _error("start")


def _watch(cfg: dict) -> None:
    """The bridge served, the app's notifications followed, the first state read."""
    from . import bridge

    bridge.serve(int(cfg["ports"]["bridge"]), cfg["secrets"]["bridge"], cfg.get("bind_host", "127.0.0.1"),
                 on_refused=lambda peer: _emit("suspected_forgery", {"reason": "a bridge request without the run's secret",
                                                                    "peer": peer}),
                 flush=lambda: _client.flush(5.0), client_paused=_client.paused,
                 client_held=_client.held)
    bpy.app.timers.register(lambda: bridge.drain(_before_call, _after_call, _during_call), first_interval=0.0, persistent=True)
    bpy.app.timers.register(_poll, first_interval=POLL, persistent=True)
    bpy.app.handlers.depsgraph_update_post.append(_on_depsgraph)
    bpy.app.handlers.load_post.append(_on_load)
    bpy.app.handlers.save_post.append(_on_save)
    _subscribe()
    _first_frame[0] = bpy.types.SpaceView3D.draw_handler_add(_on_first_draw, (), "WINDOW", "POST_PIXEL")
    _rescan("start")
    _emit("probe_started", {"file": bpy.data.filepath, "objects": [o["name"] for o in (_last or {}).get("objects", [])]})


def _emit(name: str, payload: dict) -> None:
    if _client is not None:
        from . import bridge
        _client.emit(name, {**payload, "channel": "api" if bridge.in_call() else "gui"})


def _error(where: str) -> None:
    _emit("probe_error", {"where": where, "trace": traceback.format_exc()[-3000:]})


def _rescan(trigger: str) -> None:
    global _last
    from . import state
    try:
        new = state.read(flush_text=trigger != "depsgraph")
    except Exception:
        return _error(f"read ({trigger})")
    if _last is not None:
        try:
            for name, payload in state.diff(_last, new):
                _emit(name, {**payload, "trigger": trigger})
        except Exception:
            _error(f"diff ({trigger})")
    _last = new


def _before_call(method: str) -> None:
    _rescan(f"before:{method}")


def _after_call(method: str) -> None:
    _rescan(f"bridge:{method}")


def _during_call(method: str) -> None:
    _rescan(f"during:{method}")


def _poll():
    _rescan("poll")
    return POLL


_pending = [False]


def _soon(trigger: str) -> None:
    """A rescan once the notifying code has returned (handlers must not read half-updated data)."""
    if not _pending[0]:
        _pending[0] = True

        def run():
            _pending[0] = False
            _rescan(trigger)
        bpy.app.timers.register(run, first_interval=0.0)


@bpy.app.handlers.persistent
def _on_depsgraph(scene, depsgraph=None) -> None:
    _soon("depsgraph")


@bpy.app.handlers.persistent
def _on_load(*_args) -> None:
    global _last
    try:
        _last = None
        _rescan("load")
        _subscribe()  # a loaded file drops the message-bus subscriptions
        _emit("file_loaded", {"path": bpy.data.filepath, "objects": [o["name"] for o in (_last or {}).get("objects", [])]})
    except Exception:
        _error("load_post")


@bpy.app.handlers.persistent
def _on_save(*_args) -> None:
    try:
        _emit("file_saved", {"path": bpy.data.filepath, "objects": [o.name for o in bpy.data.objects],
                             "exists": os.path.isfile(bpy.data.filepath)})
    except Exception:
        _error("save_post")


def _subscribe() -> None:
    bpy.msgbus.clear_by_owner(_owner)
    for key in [(bpy.types.Object, "name"), (bpy.types.Object, "location"), (bpy.types.Object, "rotation_euler"),
                (bpy.types.Object, "scale"), (bpy.types.Object, "mode"), (bpy.types.View3DShading, "type"),
                (bpy.types.Object, "modifiers"), (bpy.types.TextCurve, "body")]:
        bpy.msgbus.subscribe_rna(key=key, owner=_owner, args=(), notify=lambda: _soon("msgbus"),
                                 options={"PERSISTENT"})


_first_frame = [None]


def _on_first_draw() -> None:
    # called while the 3D view draws; the frame is on screen once this drawing pass is over
    if _first_frame[0] is not None:
        bpy.types.SpaceView3D.draw_handler_remove(_first_frame[0], "WINDOW")
        _first_frame[0] = None

        def ready():
            _emit("ui_ready", {"seconds": round(time.monotonic() - START, 2)})
        bpy.app.timers.register(ready, first_interval=0.0)
