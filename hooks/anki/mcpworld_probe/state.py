"""Read an Anki collection into plain data, and diff two reads into semantic milestone events.

Pure `anki` library code (no Qt): the in-app probe diffs after every operation, and the
end-of-run state query uses the same reader, in the app (through the bridge) or on the file.
"""

from __future__ import annotations

FLAG_NAMES = {0: "none", 1: "red", 2: "orange", 3: "green", 4: "blue", 5: "pink", 6: "turquoise", 7: "purple"}


def read(col) -> dict:
    today = col.sched.today
    decks = {d.id: d.name for d in col.decks.all_names_and_ids()}
    notetypes, field_names = {}, {}
    for m in col.models.all():
        field_names[m["id"]] = [f["name"] for f in m["flds"]]
        notetypes[m["id"]] = {"id": m["id"], "name": m["name"], "fields": field_names[m["id"]],
                              "templates": [{"name": t["name"], "qfmt": t["qfmt"], "afmt": t["afmt"]} for t in m["tmpls"]],
                              "css": m.get("css", ""), "is_cloze": m.get("type") == 1}
    notes = {}
    for nid, mid, flds, tags in col.db.execute("select id, mid, flds, tags from notes"):
        names = field_names.get(mid, [])
        notes[nid] = {"id": nid, "notetype": notetypes.get(mid, {}).get("name"),
                      "fields": dict(zip(names, flds.split("\x1f"))), "tags": tags.split()}
    cards = {}
    for cid, nid, did, queue, ctype, due, ivl, flags in col.db.execute(
            "select id, nid, did, queue, type, due, ivl, flags from cards"):
        cards[cid] = {"id": cid, "nid": nid, "deck": decks.get(did), "deck_id": did, "queue": queue,
                      "suspended": queue == -1, "flag": flags & 7, "flag_name": FLAG_NAMES[flags & 7],
                      "type": ctype, "ivl": ivl, "due_days": (due - today) if ctype == 2 else None}
    return {"decks": decks, "notetypes": notetypes, "notes": notes, "cards": cards,
            "tags": sorted(col.tags.all()), "prefs": preferences(col),
            "deck_options": deck_options(col), "deck_presets": deck_presets(col)}


def deck_options(col) -> dict:
    """Every deck options preset (Anki's own keys: new.perDay, rev.perDay, lapse.leechFails, ...),
    bookkeeping (mod, usn) left out; which deck uses which is on the deck (`deck_presets`)."""
    return {c["id"]: {k: v for k, v in c.items() if k not in ("mod", "usn")} for c in col.decks.all_config()}


def deck_presets(col) -> dict:
    return {d["id"]: d.get("conf") for d in col.decks.all() if not d.get("dyn")}


def preferences(col) -> dict:
    """Every collection preference, by Anki's own names ("scheduling.rollover", "editing.default_search_text",
    ...): all of them, so that a change to one a task did not ask for shows in the state diff."""
    out = {}

    def walk(msg, prefix):
        for f in msg.DESCRIPTOR.fields:
            value = getattr(msg, f.name)
            if f.message_type is not None:
                walk(value, prefix + f.name + ".")
            else:
                out[prefix + f.name] = f.enum_type.values_by_number[value].name if f.enum_type else value
    walk(col.get_preferences(), "")
    return out


def set_preferences(prefs, changes: dict) -> None:
    """Apply {"section.name": value} to a Preferences message; a wrong name or type raises ValueError."""
    for key, value in changes.items():
        section, _, name = key.partition(".")
        group = getattr(prefs, section, None) if section in {f.name for f in prefs.DESCRIPTOR.fields} else None
        fields = {f.name: f for f in group.DESCRIPTOR.fields} if group is not None else {}
        if name not in fields:
            known = ", ".join(sorted(f"{s.name}.{f.name}" for s in prefs.DESCRIPTOR.fields for f in s.message_type.fields))
            raise ValueError(f"unknown preference {key!r} (known: {known})")
        f = fields[name]
        if f.enum_type is not None and isinstance(value, str):
            if value not in f.enum_type.values_by_name:
                raise ValueError(f"{key}: {value!r} is not one of {', '.join(f.enum_type.values_by_name)}")
            value = f.enum_type.values_by_name[value].number
        elif f.type == f.TYPE_BOOL:
            if not isinstance(value, bool):
                raise ValueError(f"{key}: expected true or false, got {value!r}")
        elif f.type == f.TYPE_STRING:
            value = str(value)
        else:
            try:
                value = int(value)
            except (TypeError, ValueError):
                raise ValueError(f"{key}: expected a whole number, got {value!r}") from None
        setattr(group, name, value)


def media(col) -> list[dict]:
    """The collection's media files with their SHA-256 (for the final state only: it reads files)."""
    import hashlib
    import os

    folder = col.media.dir()
    out = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                out.append({"name": name, "sha256": hashlib.sha256(f.read()).hexdigest(), "size": os.path.getsize(path)})
    return out


def state(snap: dict) -> dict:
    """The JSON form a task's success.state predicates read."""
    cards_of: dict[int, list] = {}
    for c in snap["cards"].values():
        cards_of.setdefault(c["nid"], []).append(c)
    notes = []
    for n in snap["notes"].values():
        cs = sorted(cards_of.get(n["id"], []), key=lambda c: c["id"])
        notes.append({**n, "deck": cs[0]["deck"] if cs else None, "cards": cs})
    presets = snap.get("deck_presets", {})
    return {"decks": [{"id": i, "name": name, "options": presets.get(i)} for i, name in snap["decks"].items()],
            "deck_names": sorted(snap["decks"].values()),
            "notes": notes, "note_count": len(notes), "card_count": len(snap["cards"]),
            "notetypes": list(snap["notetypes"].values()),
            "notetype_names": sorted(nt["name"] for nt in snap["notetypes"].values()),
            "tags": snap["tags"], "prefs": snap["prefs"], "deck_options": list(snap["deck_options"].values())}


def _card_payload(card: dict, notes: dict) -> dict:
    note = notes.get(card["nid"], {})
    return {**card, "fields": note.get("fields", {}), "tags": note.get("tags", []), "notetype": note.get("notetype")}


def diff(old: dict, new: dict) -> list[tuple[str, dict]]:
    """Semantic events that turn `old` into `new`."""
    out: list[tuple[str, dict]] = []
    od, nd = old["decks"], new["decks"]
    for did in nd.keys() - od.keys():
        out.append(("deck_added", {"id": did, "name": nd[did]}))
    for did in od.keys() - nd.keys():
        out.append(("deck_removed", {"id": did, "name": od[did]}))
    for did in od.keys() & nd.keys():
        if od[did] != nd[did]:
            out.append(("deck_renamed", {"id": did, "old_name": od[did], "name": nd[did]}))

    om, nm = old["notetypes"], new["notetypes"]
    for mid in nm.keys() - om.keys():
        out.append(("notetype_added", nm[mid]))
    for mid in om.keys() - nm.keys():
        out.append(("notetype_removed", om[mid]))
    for mid in om.keys() & nm.keys():
        if om[mid] != nm[mid]:
            changed = [k for k in ("name", "fields", "templates", "css") if om[mid][k] != nm[mid][k]]
            out.append(("notetype_changed", {**nm[mid], "changed": changed}))

    on, nn, nc = old["notes"], new["notes"], new["cards"]
    deck_of = {}
    for c in sorted(nc.values(), key=lambda c: c["id"]):
        deck_of.setdefault(c["nid"], c["deck"])
    for nid in sorted(nn.keys() - on.keys()):
        n = nn[nid]
        out.append(("note_added", {**n, "deck": deck_of.get(nid),
                                   "card_count": sum(1 for c in nc.values() if c["nid"] == nid)}))
    for nid in sorted(on.keys() - nn.keys()):
        out.append(("note_removed", on[nid]))
    for nid in sorted(on.keys() & nn.keys()):
        a, b = on[nid], nn[nid]
        if a["fields"] != b["fields"]:
            changed = [k for k in b["fields"] if a["fields"].get(k) != b["fields"][k]]
            out.append(("note_updated", {**b, "changed_fields": changed, "old_fields": a["fields"]}))
        if a["tags"] != b["tags"]:
            out.append(("note_tags_changed", {**b, "added": sorted(set(b["tags"]) - set(a["tags"])),
                                              "removed": sorted(set(a["tags"]) - set(b["tags"]))}))

    oc = old["cards"]
    for cid in sorted(oc.keys() & nc.keys()):
        a, b = oc[cid], nc[cid]
        payload = _card_payload(b, nn)
        if a["deck_id"] != b["deck_id"]:
            out.append(("card_moved", {**payload, "old_deck": a["deck"]}))
        if a["suspended"] != b["suspended"]:
            out.append(("card_suspended" if b["suspended"] else "card_unsuspended", payload))
        if a["flag"] != b["flag"]:
            out.append(("card_flagged", {**payload, "old_flag": a["flag"]}))
        if (a["type"], a["due_days"], a["ivl"]) != (b["type"], b["due_days"], b["ivl"]) and b["due_days"] is not None:
            out.append(("card_due_changed", payload))

    ot, nt = set(old["tags"]), set(new["tags"])
    for t in sorted(nt - ot):
        out.append(("tag_added", {"tag": t}))
    for t in sorted(ot - nt):
        out.append(("tag_removed", {"tag": t}))

    oo, no = old["deck_options"], new["deck_options"]
    for cid in sorted(oo.keys() | no.keys()):
        if oo.get(cid) != no.get(cid):
            a, b = oo.get(cid) or {}, no.get(cid) or {}
            out.append(("deck_options_changed", {**(b or a), "removed": not b, "added": not a,
                                                 "changed": sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))}))
    op, np = old.get("deck_presets", {}), new.get("deck_presets", {})
    for did in sorted(op.keys() & np.keys()):
        if op[did] != np[did]:
            out.append(("deck_preset_changed", {"id": did, "name": nd.get(did), "old": op[did], "options": np[did]}))

    for k, v in new["prefs"].items():
        if old["prefs"].get(k) != v:
            out.append(("config_changed", {"key": k, "old": old["prefs"].get(k), "value": v}))
    return out
