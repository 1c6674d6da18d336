"""What a trial changed in the app: the state query's answer at the start (before the agent) against the
one at the end, as a list of changes, and which of them the task does not allow (collateral damage).

A state is JSON. It is compared item by item wherever items have an identity:
  * a dict by its keys (OBS's inputs by name),
  * a list of records by the field the app names as its key (`[sources.state_query] keys`: notes by
    "id"; a nested list by its path with `[*]` for the enclosing items, e.g. "scene_items[*]" by "source"),
  * a list of plain values the app names as a set (`sets`: Anki's tag list) value by value;
and anything else (a scalar, an ordered list such as the scene order) as a whole. Fields the app lists
under `ignore` (derived counts, where the state was read from) are left out.

A task says what it may change under `success.changes`: per top-level field, `true` (anything in it), or
a `where` that one of the records enclosing the change (the note of a card, the card itself), before or
after the change, must match. A record of a dict collection carries its key as "key", a set member is
{"value": v}, and each field name on the way down is a record {"field": name} (to allow one setting of
a group: {"field": {"$in": ["VBitrate", "ABitrate"]}}). Everything else that changed is collateral and fails the trial.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

Pred = Callable[[Any], bool]


class Change(BaseModel):
    path: str                      # e.g. notes[id=17].cards[id=17].suspended, prefs[rollover], scenes
    field: str                     # the top-level field it is under
    kind: str                      # added, removed, changed
    before: Any = None
    after: Any = None
    records: list[Any] = Field(default_factory=list)  # the enclosing records, before and after (for a where)

    def brief(self, limit: int = 120) -> str:
        if self.kind == "changed":
            text = f"{self.path}: {json.dumps(self.before, default=str)} -> {json.dumps(self.after, default=str)}"
        else:
            text = f"{self.path} {self.kind}"
        return text if len(text) <= limit else text[:limit - 1] + "…"


class _Differ:
    def __init__(self, keys: dict[str, str], sets: set[str]):
        self.keys, self.sets, self.out = keys, sets, []

    def walk(self, field: str, path: str, a: Any, b: Any, records: list[Any], had: bool = True, has: bool = True) -> None:
        if not (had and has):
            if had or has:
                self.add(field, path, "changed" if had and has else "added" if has else "removed", a, b, records)
            return
        pattern = re.sub(r"\[[^\]]*\]", "[*]", path)
        if isinstance(a, dict) and isinstance(b, dict):
            keyed = path == field  # a top-level dict is a collection of named records; deeper dicts are fields
            for k in sorted(set(a) | set(b), key=str):
                sub = f"{path}[{k}]" if keyed else f"{path}.{k}"
                rec = [_named(k, a), _named(k, b)] if keyed else [{"field": k}]
                self.walk(field, sub, a.get(k), b.get(k), records + rec, k in a, k in b)
        elif isinstance(a, list) and isinstance(b, list) and pattern in self.keys:
            key = self.keys[pattern]
            by_a, by_b = {_key(x, key): x for x in a}, {_key(x, key): x for x in b}
            for k in dict.fromkeys([*by_a, *by_b]):
                self.walk(field, f"{path}[{key}={k}]", by_a.get(k), by_b.get(k),
                          records + [by_a.get(k), by_b.get(k)], k in by_a, k in by_b)
        elif isinstance(a, list) and isinstance(b, list) and pattern in self.sets:
            for v in [x for x in a if x not in b]:
                self.add(field, f"{path}[{v}]", "removed", v, None, records + [{"value": v}])
            for v in [x for x in b if x not in a]:
                self.add(field, f"{path}[{v}]", "added", None, v, records + [{"value": v}])
        elif a != b:
            self.add(field, path, "changed", a, b, records)

    def add(self, field, path, kind, a, b, records) -> None:
        self.out.append(Change(path=path, field=field, kind=kind, before=a, after=b,
                               records=[r for r in records if r is not None]))


def diff(start: dict, end: dict, keys: dict[str, str] | None = None, ignore: list[str] | tuple = (),
         sets: list[str] | tuple = ()) -> list[Change]:
    """Every difference between two states (fields in `ignore` left out)."""
    d = _Differ(keys or {}, set(sets))
    for field in sorted(set(start) | set(end)):
        if field not in ignore:
            d.walk(field, field, start.get(field), end.get(field), [], field in start, field in end)
    return d.out


def _named(k: Any, collection: dict) -> Any:
    """A dict collection's record as a where sees it: its fields and its key (a name is often the key)."""
    if k not in collection:
        return None
    item = collection[k]
    return {"key": k, **item} if isinstance(item, dict) else {"key": k, "value": item}


def _key(item: Any, key: str) -> Any:
    value = item.get(key) if isinstance(item, dict) else item
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else value


def collateral(changes: list[Change], allowed: dict[str, Pred | bool]) -> list[Change]:
    """The changes the task does not allow: in a field it does not name, or to records none of which
    matches the field's `where` before or after."""
    out = []
    for c in changes:
        rule = allowed.get(c.field)
        if rule is True:
            continue
        if callable(rule) and any(_matches(rule, r) for r in c.records):
            continue
        out.append(c)
    return out


def _matches(pred: Pred, record: Any) -> bool:
    try:
        return bool(pred(record))
    except Exception:  # a predicate over a shape it does not fit simply does not match
        return False
