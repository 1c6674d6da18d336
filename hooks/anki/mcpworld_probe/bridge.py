"""A loopback HTTP bridge inside Anki: the MCP server's calls run as real Anki operations.

Every change goes through aqt's CollectionOp on the main thread (initiator=BRIDGE), so it is
undoable, refreshes the GUI, and fires the same hooks -- and so the same milestones -- as the GUI.
POST / {"method": name, "params": {...}} -> {"result": ...} or {"error": "..."}.
"""

from __future__ import annotations

import hmac
import json
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aqt import mw
from aqt.operations import CollectionOp

from . import state as anki_state

BRIDGE = object()  # the initiator tag of the bridge's own operations
TIMEOUT = 30.0


class BridgeError(Exception):
    pass


def _op(fn, done, result=lambda out: None):
    CollectionOp(parent=mw, op=fn).success(lambda out: done(result(out))).failure(done).run_in_background(initiator=BRIDGE)


def _deck_id(col, name: str, create: bool = False) -> int:
    did = col.decks.id_for_name(name)
    if did is None:
        if not create:
            raise BridgeError(f"no deck named '{name}' (decks: {', '.join(d.name for d in col.decks.all_names_and_ids())})")
    return did


def _notetype(col, name: str) -> dict:
    m = col.models.by_name(name)
    if m is None:
        raise BridgeError(f"no note type named '{name}' (note types: {', '.join(x['name'] for x in col.models.all())})")
    return m


def _cards(col, query: str) -> list[int]:
    return list(col.find_cards(query))


def _notes(col, query: str) -> list[int]:
    return list(col.find_notes(query))


# -- methods: (col, params, done) ------------------------------------------------------------
def m_list_decks(col, p, done):
    done([{"id": d.id, "name": d.name, "cards": len(col.find_cards(f'deck:"{d.name}"'))} for d in col.decks.all_names_and_ids()])


def m_create_deck(col, p, done):
    name = p["name"]
    if col.decks.id_for_name(name) is not None:
        raise BridgeError(f"a deck named '{name}' already exists")
    _op(lambda c: c.decks.add_normal_deck_with_name(name), done, lambda out: {"id": out.id, "name": name})


def m_delete_deck(col, p, done):
    did = _deck_id(col, p["name"])
    _op(lambda c: c.decks.remove([did]), done, lambda out: {"deleted_cards": out.count})


def m_rename_deck(col, p, done):
    did = _deck_id(col, p["name"])
    _op(lambda c: c.decks.rename(did, p["new_name"]), done, lambda out: {"id": did, "name": p["new_name"]})


def m_add_note(col, p, done):
    m = _notetype(col, p.get("note_type", "Basic"))
    deck = p.get("deck", "Default")
    did = col.decks.id_for_name(deck)
    if did is None:
        if not p.get("create_deck", False):
            raise BridgeError(f"no deck named '{deck}' (pass create_deck=true to create it)")
    note = col.new_note(m)
    names = [f["name"] for f in m["flds"]]
    for k, v in (p.get("fields") or {}).items():
        if k not in names:
            raise BridgeError(f"note type '{m['name']}' has no field '{k}' (fields: {', '.join(names)})")
        note[k] = v
    note.tags = list(p.get("tags") or [])

    def op(c):
        target = did if did is not None else c.decks.id(deck, create=True)
        return c.add_note(note, target)
    _op(op, done, lambda out: {"note_id": note.id, "deck": deck})


def m_update_note(col, p, done):
    note = col.get_note(int(p["note_id"]))
    for k, v in (p.get("fields") or {}).items():
        if k not in note.keys():
            raise BridgeError(f"note has no field '{k}' (fields: {', '.join(note.keys())})")
        note[k] = v
    if p.get("tags") is not None:
        note.tags = list(p["tags"])
    _op(lambda c: c.update_note(note), done, lambda out: {"note_id": note.id})


def m_delete_notes(col, p, done):
    nids = _notes(col, p["query"])
    _op(lambda c: c.remove_notes(nids), done, lambda out: {"deleted_notes": len(nids)})


def m_find_notes(col, p, done):
    snap_models = {m["id"]: m["name"] for m in col.models.all()}
    out = []
    for nid in _notes(col, p["query"])[: int(p.get("limit", 100))]:
        n = col.get_note(nid)
        cards = n.cards()
        out.append({"note_id": nid, "note_type": snap_models.get(n.mid), "fields": dict(n.items()), "tags": n.tags,
                    "deck": col.decks.name(cards[0].did) if cards else None,
                    "card_ids": [c.id for c in cards]})
    done(out)


def m_move_cards(col, p, done):
    cids = _cards(col, p["query"])
    deck = p["deck"]

    def op(c):
        return c.set_deck(cids, c.decks.id(deck, create=True))
    _op(op, done, lambda out: {"moved_cards": len(cids), "deck": deck})


def m_add_tags(col, p, done):
    nids = _notes(col, p["query"])
    _op(lambda c: c.tags.bulk_add(nids, " ".join(p["tags"])), done, lambda out: {"notes": out.count})


def m_remove_tags(col, p, done):
    nids = _notes(col, p["query"])
    _op(lambda c: c.tags.bulk_remove(nids, " ".join(p["tags"])), done, lambda out: {"notes": out.count})


def m_clear_unused_tags(col, p, done):
    _op(lambda c: c.tags.clear_unused_tags(), done, lambda out: {"removed": out.count})


def m_suspend_cards(col, p, done):
    cids = _cards(col, p["query"])
    _op(lambda c: c.sched.suspend_cards(cids), done, lambda out: {"cards": len(cids)})


def m_unsuspend_cards(col, p, done):
    cids = _cards(col, p["query"])
    _op(lambda c: c.sched.unsuspend_cards(cids), done, lambda out: {"cards": len(cids)})


def m_set_flag(col, p, done):
    flag = int(p["flag"])
    if not 0 <= flag <= 7:
        raise BridgeError("flag must be 0 (none) to 7")
    cids = _cards(col, p["query"])
    _op(lambda c: c.set_user_flag_for_cards(flag, cids), done, lambda out: {"cards": len(cids)})


def m_set_due_date(col, p, done):
    cids = _cards(col, p["query"])
    _op(lambda c: c.sched.set_due_date(cids, str(p["days"])), done, lambda out: {"cards": len(cids)})


def m_find_and_replace(col, p, done):
    nids = _notes(col, p.get("query", ""))
    _op(lambda c: c.find_and_replace(note_ids=nids, search=p["search"], replacement=p["replacement"],
                                     regex=bool(p.get("regex", False)), field_name=p.get("field"),
                                     match_case=bool(p.get("match_case", False))),
        done, lambda out: {"changed_notes": out.count})


def m_undo(col, p, done):
    from anki.errors import UndoEmpty
    from aqt import gui_hooks

    if not col.undo_status().undo:
        raise BridgeError("nothing to undo")

    def ok(out):
        gui_hooks.state_did_undo(out)  # as Edit > Undo does
        done({"undone": out.operation})
    CollectionOp(parent=mw, op=lambda c: c.undo()).success(ok).failure(
        lambda e: done(BridgeError("nothing to undo") if isinstance(e, UndoEmpty) else e)).run_in_background(initiator=BRIDGE)


def m_list_note_types(col, p, done):
    done([{"name": m["name"], "fields": [f["name"] for f in m["flds"]], "templates": [t["name"] for t in m["tmpls"]],
           "is_cloze": m.get("type") == 1} for m in col.models.all()])


def m_get_note_type(col, p, done):
    m = _notetype(col, p["name"])
    done({"name": m["name"], "fields": [f["name"] for f in m["flds"]], "css": m.get("css", ""),
          "templates": [{"name": t["name"], "front": t["qfmt"], "back": t["afmt"]} for t in m["tmpls"]]})


def m_create_note_type(col, p, done):
    name = p["name"]
    if col.models.by_name(name):
        raise BridgeError(f"a note type named '{name}' already exists")
    if p.get("copy_from"):
        m = col.models.copy(_notetype(col, p["copy_from"]), add=False)
        m["name"] = name
    else:
        m = col.models.new(name)
        fields = p.get("fields") or []
        if not fields:
            raise BridgeError("give fields (or copy_from)")
        for f in fields:
            col.models.add_field(m, col.models.new_field(f))
        for i, t in enumerate(p.get("templates") or [{"name": "Card 1", "front": "{{%s}}" % fields[0],
                                                      "back": "{{FrontSide}}<hr id=answer>"}]):
            tmpl = col.models.new_template(t.get("name") or f"Card {i + 1}")
            tmpl["qfmt"], tmpl["afmt"] = t["front"], t["back"]
            col.models.add_template(m, tmpl)
    if p.get("css") is not None:
        m["css"] = p["css"]
    _op(lambda c: c.models.add_dict(m), done, lambda out: {"id": out.id, "name": name})


def m_add_field(col, p, done):
    m = _notetype(col, p["note_type"])
    col.models.add_field(m, col.models.new_field(p["field"]))
    if p.get("position") is not None:
        pos = int(p["position"]) - 1
        f = next(x for x in m["flds"] if x["name"] == p["field"])
        col.models.reposition_field(m, f, max(0, min(pos, len(m["flds"]) - 1)))
    _op(lambda c: c.models.update_dict(m), done, lambda out: {"fields": [f["name"] for f in m["flds"]]})


def m_set_card_template(col, p, done):
    m = _notetype(col, p["note_type"])
    names = [t["name"] for t in m["tmpls"]]
    name = p.get("template") or names[0]
    if name not in names:
        raise BridgeError(f"note type '{m['name']}' has no template '{name}' (templates: {', '.join(names)})")
    t = m["tmpls"][names.index(name)]
    if p.get("front") is not None:
        t["qfmt"] = p["front"]
    if p.get("back") is not None:
        t["afmt"] = p["back"]
    if p.get("css") is not None:
        m["css"] = p["css"]
    _op(lambda c: c.models.update_dict(m), done, lambda out: {"template": name})


def m_get_preferences(col, p, done):
    done(anki_state.preferences(col))


def m_set_preferences(col, p, done):
    prefs = col.get_preferences()
    anki_state.set_preferences(prefs, p.get("changes") or {})
    _op(lambda c: c.set_preferences(prefs), done, lambda out: anki_state.preferences(col))


def m_list_tags(col, p, done):
    done(sorted(col.tags.all()))


def m_rename_tag(col, p, done):
    _op(lambda c: c.tags.rename(p["tag"], p["new_name"]), done, lambda out: {"notes": out.count})


def m_find_cards(col, p, done):
    out = []
    for cid in _cards(col, p["query"])[: int(p.get("limit", 100))]:
        c = col.get_card(cid)
        out.append({"card_id": cid, "note_id": c.nid, "deck": col.decks.name(c.did), "template": c.template()["name"],
                    "queue": c.queue, "type": c.type, "due": c.due, "interval": c.ivl, "ease": c.factor,
                    "reviews": c.reps, "lapses": c.lapses, "flag": c.user_flag(), "suspended": c.queue == -1})
    done(out)


def m_forget_cards(col, p, done):
    cids = _cards(col, p["query"])
    _op(lambda c: c.sched.schedule_cards_as_new(cids, restore_position=bool(p.get("restore_position", False)),
                                                reset_counts=bool(p.get("reset_counts", False))),
        done, lambda out: {"cards": len(cids)})


def _field(m: dict, name: str) -> dict:
    for f in m["flds"]:
        if f["name"] == name:
            return f
    raise BridgeError(f"note type '{m['name']}' has no field '{name}' (fields: {', '.join(f['name'] for f in m['flds'])})")


def m_rename_field(col, p, done):
    m = _notetype(col, p["note_type"])
    col.models.rename_field(m, _field(m, p["field"]), p["new_name"])
    _op(lambda c: c.models.update_dict(m), done, lambda out: {"fields": [f["name"] for f in m["flds"]]})


def m_remove_field(col, p, done):
    m = _notetype(col, p["note_type"])
    col.models.remove_field(m, _field(m, p["field"]))
    _op(lambda c: c.models.update_dict(m), done, lambda out: {"fields": [f["name"] for f in m["flds"]]})


def m_add_card_template(col, p, done):
    m = _notetype(col, p["note_type"])
    if p["name"] in [t["name"] for t in m["tmpls"]]:
        raise BridgeError(f"note type '{m['name']}' already has a template '{p['name']}'")
    t = col.models.new_template(p["name"])
    t["qfmt"], t["afmt"] = p["front"], p["back"]
    col.models.add_template(m, t)
    _op(lambda c: c.models.update_dict(m), done, lambda out: {"templates": [t["name"] for t in m["tmpls"]]})


def m_get_deck_options(col, p, done):
    conf = col.decks.config_dict_for_deck_id(_deck_id(col, p["deck"]))
    done({k: v for k, v in conf.items() if k not in ("mod", "usn")})


def _set_path(d: dict, key: str, value) -> None:
    *parents, last = key.split(".")
    for part in parents:
        if not isinstance(d.get(part), dict):
            raise BridgeError(f"unknown option '{key}'")
        d = d[part]
    if last not in d:
        raise BridgeError(f"unknown option '{key}' (at this level: {', '.join(sorted(d))})")
    if type(d[last]) is not type(value) and not (isinstance(d[last], (int, float)) and isinstance(value, (int, float))
                                                 and not isinstance(value, bool)):
        raise BridgeError(f"option '{key}' takes a {type(d[last]).__name__}, got {value!r}")
    d[last] = value


def m_set_deck_options(col, p, done):
    from anki.collection import OpChanges

    conf = col.decks.config_dict_for_deck_id(_deck_id(col, p["deck"]))
    for key, value in (p.get("changes") or {}).items():
        _set_path(conf, key, value)

    def op(c):
        c.decks.update_config(conf)
        return OpChanges(deck_config=True)
    _op(op, done, lambda out: {"preset": conf["name"], "decks": [col.decks.name(d) for d in col.decks.decks_using_config(conf)]})


def m_store_media_file(col, p, done):
    import os

    path = os.path.expanduser(p["path"])
    if not os.path.isfile(path):
        raise BridgeError(f"no file at {path}")
    done({"filename": col.media.add_file(path)})


def m_state(col, p, done):
    done({**anki_state.state(anki_state.read(col)), "media": anki_state.media(col)})


METHODS = {name[2:]: fn for name, fn in globals().items() if name.startswith("m_") and callable(fn)}


def call_on_main(method: str, params: dict, on_main_done=None):
    """Run a method on Anki's main thread and wait for it (and its operation) to finish."""
    fn = METHODS.get(method)
    if fn is None:
        raise BridgeError(f"unknown method '{method}'")
    box: dict = {}
    finished = threading.Event()

    def done(value=None):
        box["value"] = value
        finished.set()

    def run():
        try:
            if mw.col is None:
                raise BridgeError("no collection is open")
            fn(mw.col, params, done)
        except Exception as e:  # reported to the caller as an error
            done(e)

    mw.taskman.run_on_main(run)
    if not finished.wait(TIMEOUT):
        raise BridgeError(f"'{method}' did not finish within {TIMEOUT:.0f}s")
    value = box.get("value")
    if isinstance(value, Exception):
        raise value
    return value


def main_thread_barrier(then=None, timeout: float = 5.0) -> None:
    """Return once the main thread has run everything queued before now (e.g. an op's hooks),
    and `then` after it, if given."""
    passed = threading.Event()

    def run():
        try:
            if then is not None:
                then()
        finally:
            passed.set()

    mw.taskman.run_on_main(run)
    passed.wait(timeout)


_calls = 0  # bridge requests in progress (the probe labels what happens meanwhile as done through the API)
_calls_lock = threading.Lock()


def in_call() -> bool:
    return _calls > 0


def _count(delta: int) -> None:
    global _calls
    with _calls_lock:
        _calls += delta


class _Handler(BaseHTTPRequestHandler):
    after_call = None  # set by serve(): e.g. flush the probe before answering a state query
    before_call = None
    token = ""         # set by serve(): the run's secret, which every request must carry
    on_refused = None

    def do_POST(self):
        if not hmac.compare_digest(self.headers.get("Authorization", ""), f"Bearer {_Handler.token}"):
            if _Handler.on_refused:
                _Handler.on_refused(f"{self.client_address[0]}:{self.client_address[1]}")
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if _Handler.before_call:
            _Handler.before_call()  # what the GUI changed until now is reported as the GUI's, not this call's
        _count(+1)
        try:
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            result = call_on_main(req.get("method", ""), req.get("params") or {})
            if _Handler.after_call:
                _Handler.after_call(req.get("method", ""))
            body = {"result": result}
        except (BridgeError, KeyError, ValueError, TypeError) as e:
            body = {"error": f"{type(e).__name__}: {e}" if not isinstance(e, BridgeError) else str(e)}
        except Exception as e:
            body = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-2000:]}
        finally:
            _count(-1)
        data = json.dumps(body, default=str).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):  # keep Anki's stderr clean
        pass


def serve(port: int, token: str, host: str = "127.0.0.1", after_call=None, on_refused=None,
          before_call=None) -> ThreadingHTTPServer:
    """host: loopback, or every interface inside a container (the MCP server and state query run on the host).
    Only requests with `Authorization: Bearer <token>` are served; the others get 401 and `on_refused`."""
    if not token:
        raise ValueError("the bridge needs the run's secret")
    _Handler.after_call, _Handler.token, _Handler.on_refused = after_call, token, on_refused
    _Handler.before_call = before_call
    server = ThreadingHTTPServer((host, port), _Handler)
    threading.Thread(target=server.serve_forever, name="mcpworld-bridge", daemon=True).start()
    return server
