"""What a trial changed in the app: the state query's answer at the start (before the agent) against the
one at the end, as a list of changes, and which of them the task does not allow (collateral damage).

A state is JSON. Collections are compared item by item: a dict by its keys, a list of records by the
field the app names as its key (`[sources.state_query] keys`, e.g. notes by "id"); any other value
(a scalar, a list of scalars such as the scene order) as a whole. Fields the app lists under `ignore`
(derived counts, where the state was read from) are left out.

A task says what it may change under `success.changes`: per top-level field, `true` (anything in it),
or a `where` predicate an item must match, before or after the change, for its change to be allowed.
Everything else that changed is collateral and fails the trial.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

Pred = Callable[[Any], bool]


class Change(BaseModel):
    path: str                      # e.g. notes[id=17].cards[0].suspended, prefs.rollover, scenes
    field: str                     # the top-level field it is under
    kind: str                      # added, removed, changed
    before: Any = None
    after: Any = None
    item_before: Any = None        # the collection item it belongs to (for the task's where), if any
    item_after: Any = None

    def brief(self, limit: int = 120) -> str:
        import json
        if self.kind == "changed":
            text = f"{self.path}: {json.dumps(self.before, default=str)} -> {json.dumps(self.after, default=str)}"
        else:
            text = f"{self.path} {self.kind}"
        return text if len(text) <= limit else text[:limit - 1] + "…"


def diff(start: dict, end: dict, keys: dict[str, str] | None = None, ignore: list[str] | tuple = ()) -> list[Change]:
    """Every difference between two states (fields in `ignore` left out)."""
    keys = keys or {}
    out: list[Change] = []
    for field in sorted(set(start) | set(end)):
        if field in ignore:
            continue
        a, b = start.get(field), end.get(field)
        key = keys.get(field)
        if key and isinstance(a, list) and isinstance(b, list):
            out += _records(field, a, b, key)
        elif isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b), key=str):
                _walk(out, field, f"{field}[{k}]", a.get(k), b.get(k), _keyed(k, a, "key"), _keyed(k, b, "key"),
                      k in a, k in b)
        elif a != b:
            out.append(Change(path=field, field=field, kind=_kind(field in start, field in end), before=a, after=b))
    return out


def _records(field: str, a: list, b: list, key: str) -> list[Change]:
    by_a = {_key(x, key): x for x in a}
    by_b = {_key(x, key): x for x in b}
    out: list[Change] = []
    for k in list(dict.fromkeys([*by_a, *by_b])):
        _walk(out, field, f"{field}[{key}={k}]", by_a.get(k), by_b.get(k), by_a.get(k), by_b.get(k), k in by_a, k in by_b)
    return out


def _keyed(k: Any, collection: dict, name: str) -> Any:
    """A dict collection's item as a where sees it: its fields and its key (a name is often the key)."""
    if k not in collection:
        return None
    item = collection[k]
    return {name: k, **item} if isinstance(item, dict) else {name: k, "value": item}


def _key(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else item


def _kind(had: bool, has: bool) -> str:
    return "changed" if had and has else "added" if has else "removed"


def _walk(out: list[Change], field: str, path: str, a: Any, b: Any, item_a: Any, item_b: Any,
          had: bool = True, has: bool = True) -> None:
    if not (had and has):
        if had or has:
            out.append(Change(path=path, field=field, kind=_kind(had, has), before=a, after=b,
                              item_before=item_a, item_after=item_b))
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            _walk(out, field, f"{path}.{k}", a.get(k), b.get(k), item_a, item_b, k in a, k in b)
    elif a != b:
        out.append(Change(path=path, field=field, kind="changed", before=a, after=b, item_before=item_a, item_after=item_b))


def collateral(changes: list[Change], allowed: dict[str, Pred | bool]) -> list[Change]:
    """The changes the task does not allow: in a field it does not name, or to an item that matches the
    field's `where` neither before nor after."""
    out = []
    for c in changes:
        rule = allowed.get(c.field)
        if rule is True:
            continue
        if callable(rule) and any(item is not None and _matches(rule, item) for item in (c.item_before, c.item_after)):
            continue
        out.append(c)
    return out


def _matches(pred: Pred, item: Any) -> bool:
    try:
        return bool(pred(item))
    except Exception:  # a predicate over a shape it does not fit simply does not match
        return False
