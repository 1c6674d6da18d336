"""mcpworld's Anki probe: an add-on that reports semantic milestones to the evaluator.

After every collection operation (GUI or bridge), on undo, and on a slow poll of the
collection's modification time, it re-reads the collection and diffs it against the last read:
the differences become events (note_added, deck_removed, card_suspended, config_changed, ...).
It also serves the bridge the Anki MCP server talks to. Outside mcpworld (no run config) it
does nothing.
"""

from __future__ import annotations

import os
import threading
import traceback

from . import probe_client, probe_guard

_cfg = probe_client.read_config()  # read and delete the one-time run config before anything else


def _code_run(surface: str, code: str) -> None:
    # before the refusal reaches the agent, the evaluator has it
    _emit("code_run", {"surface": surface, "code": code, "blocked": True, "channel": "gui"})
    if _client is not None:
        _client.flush(5.0)


if _cfg is not None:
    # the first act: from here on no source the agent types (the Debug Console) compiles in this process
    _guard = probe_guard.install(_code_run, [os.path.dirname(os.path.abspath(__file__))],
                                 surfaces={"aqt/debug_console.py": "debug_console"})

    from aqt import addons

    def _refuse_install(self, file, *_args, **_kwargs):  # (file, manifest=None, force_enable=False) in Anki 25+
        # an add-on runs inside Anki (where this probe runs) from its next start: none is installed in a run
        _code_run("addon_install", f"<an add-on from {getattr(file, 'name', file)}>")
        return addons.InstallError(errmsg="mcpworld: installing add-ons is turned off in this run")

    addons.AddonManager.install = _refuse_install
    from aqt import gui_hooks, mw
    from aqt.qt import QTimer

    from . import bridge
    from . import state as anki_state

    _client: probe_client.ProbeClient | None = None
    _last: dict | None = None
    _last_mod = None
    _undone: str | None = None  # the operation an undo just reverted, to label the changes it causes
    _lock = threading.Lock()

    def _emit(name: str, payload: dict) -> None:
        # channel: api while a bridge request runs (its operation and the rescan after it included), else gui
        if _client is not None:
            _client.emit(name, {**payload, "channel": payload.get("channel") or ("api" if bridge.in_call() else "gui")})

    def _error(where: str) -> None:
        _emit("probe_error", {"where": where, "trace": traceback.format_exc()[-3000:]})

    def _rescan(trigger: str, handler=None, extra: dict | None = None) -> None:
        """Diff the collection against the last read and emit what changed (main thread only)."""
        global _last, _last_mod, _undone
        col = mw.col
        if col is None:
            return
        with _lock:
            new = anki_state.read(col)
            _last_mod = col.mod
            if _last is not None:
                via = "bridge" if handler is bridge.BRIDGE else "gui"  # the operation's initiator
                label = f"Undo {_undone}" if _undone else col.undo_status().undo
                _undone = None
                for name, payload in anki_state.diff(_last, new):
                    _emit(name, {**payload, "trigger": trigger, "via": via, "op": label, **(extra or {})})
            _last = new

    def _on_collection_loaded(col) -> None:
        global _client
        try:
            _rescan("collection_did_load")
        except Exception:
            _error("collection_did_load")
        if _client is None:
            _client = probe_client.ProbeClient.from_config(_cfg)
            try:
                bridge.serve(int(_cfg["ports"]["bridge"]), _cfg["secrets"]["bridge"], _cfg.get("bind_host", "127.0.0.1"),
                             after_call=_after_bridge_call, on_refused=_bridge_refused,
                             before_call=lambda: bridge.main_thread_barrier(lambda: _rescan("before_bridge_call")))
            except Exception:  # the runner stops waiting for Anki at once, with the trace (a port taken, ...)
                return _error("start")
        _emit("collection_loaded", {"path": col.path, "profile": mw.pm.name if mw.pm else None})

    def _bridge_refused(peer: str) -> None:
        # a request without the run's secret: somebody other than the MCP server or the state query
        _emit("suspected_forgery", {"reason": "a bridge request without the run's secret", "peer": peer})

    def _after_bridge_call(method: str) -> None:
        # An MCP call returns only once the milestones it caused are with the evaluator: the op's
        # hooks run on the main thread after its result is ready, then the probe flushes.
        # The op's hooks may be queued on the main thread only after the barrier, so the probe also
        # rescans there itself: whatever the call changed is emitted before the call returns.
        if _client is not None:
            bridge.main_thread_barrier()
            bridge.main_thread_barrier(lambda: _rescan("bridge_call", bridge.BRIDGE))
            _client.flush(5.0)

    _ui_ready_sent = False

    def _on_deck_browser(_deck_browser) -> None:
        # The deck list, the toolbar and the bottom bar ("Create Deck") are three web views that load
        # after this hook; an eval waits in each view's queue until its page is loaded, so the last
        # callback means all three are there (the bottom bar's buttons paint ~0.4 s after the list).
        global _ui_ready_sent
        if _ui_ready_sent or _client is None:
            return
        _ui_ready_sent = True
        views = [w for w in (mw.web, mw.toolbarWeb, mw.bottomWeb) if w is not None]
        pending = set(range(len(views)))

        sent = []

        def send(loaded: int) -> None:
            if not sent:
                sent.append(True)
                _emit("ui_ready", {"views": len(views), "loaded": loaded})

        def loaded(i: int):
            def done(_value) -> None:
                pending.discard(i)
                if not pending:
                    send(len(views))
            return done

        for i, w in enumerate(views):
            w.evalWithCallback("document.readyState", loaded(i))
        # a view that never loads must not hold the trial until its ready timeout: say so in the payload
        QTimer.singleShot(10_000, lambda: send(len(views) - len(pending)))

    def _on_op(changes, handler) -> None:
        try:
            if any(getattr(changes, f.name) for f in changes.DESCRIPTOR.fields):
                _rescan("operation_did_execute", handler)
        except Exception:
            _error("operation_did_execute")

    def _on_undo(out) -> None:
        global _undone
        try:
            _undone = out.operation
            _emit("undo", {"operation": out.operation})
        except Exception:
            _error("state_did_undo")

    def _poll() -> None:
        # Safety net for writes that bypass the operation hooks (legacy direct calls).
        try:
            if mw.col is not None and mw.col.mod != _last_mod:
                _rescan("poll")
        except Exception:
            _error("poll")

    def _on_close() -> None:
        try:
            _emit("profile_closing", {})
            if _client is not None:
                _client.flush(2.0)
        except Exception:
            pass

    def _searching(find, kind: str):
        """Collection.find_cards/find_notes, reporting each search: the Browse window's and the bridge's
        searches both run through them, so "searched" fires for the GUI and the API path alike."""
        def find_and_report(self, query, *args, **kwargs):
            found = find(self, query, *args, **kwargs)
            try:
                _emit("searched", {"query": str(query), "kind": kind, "count": len(found)})
            except Exception:
                _error("searched")
            return found
        return find_and_report

    from anki.collection import Collection

    Collection.find_cards = _searching(Collection.find_cards, "cards")
    Collection.find_notes = _searching(Collection.find_notes, "notes")

    gui_hooks.collection_did_load.append(_on_collection_loaded)
    gui_hooks.operation_did_execute.append(_on_op)
    gui_hooks.state_did_undo.append(_on_undo)
    gui_hooks.profile_will_close.append(_on_close)
    gui_hooks.deck_browser_did_render.append(_on_deck_browser)
    gui_hooks.main_window_did_init.append(lambda: mw.progress.timer(1000, _poll, True, requiresCollection=True, parent=mw))
    os.environ.pop(probe_client.CONFIG_ENV, None)
