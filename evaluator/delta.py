"""What a trial changed in the app, record by record, matched one to one against what the task expects.

A state (the state query's answer) is JSON; each top-level field is one of:
  * a **collection** of records: a list keyed by one of its fields (`keys`: notes by "id"), or a dict, one
    record per key (carrying its key as "key"; a value that is not a dict as "value"). A keyed list inside a
    record is a collection of its own, named by its path with [*] for the enclosing records
    ("notes[*].cards"; "scene_items[*]" when a dict's values are the lists); its records carry the enclosing
    record as "_parent";
  * a **set** of plain values (`sets`, also nested: "notes[*].tags"): each member a record {"value": v};
  * a **value** (anything else): one record {"value": v}.

A record present at one end only is one change, `added` or `removed` (its nested records come and go with
it); a record present at both ends is `changed` when any of its own fields differ (compared leaf by leaf,
nested collections on their own). Fields in `ignore` are never compared: a top-level field, or a field of a
collection's records ("notes[*].deck", derived from the note's cards).

A task's expected change, per collection, is `add` (a where over the new record), `remove` (over the old
one) or `change` (over the old one) `to` (over the new one), with the fields that may differ (those `to`
names, unless `fields` lists them), `count` times (1 unless it says: 2, "0..1", "1..", or "all": every record
of the start that matches and is not already as asked). The actual changes are matched to the expected ones
one to one (a maximum matching, required counts first): an expected change left short fails the verdict;
an actual change left over is collateral, unless a tolerance (a collection, optionally a kind, a where and
the fields, and why) names it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

Pred = Callable[[Any], bool]
ADDED, REMOVED, CHANGED = "added", "removed", "changed"
KIND_OF = {"add": ADDED, "remove": REMOVED, "change": CHANGED}
PARENT = "_parent"
_MISSING = object()


@dataclass(frozen=True)
class Shape:
    """How an app's state is compared: key fields of record lists by path, sets by path, ignored fields."""

    keys: dict[str, str] = field(default_factory=dict)
    sets: frozenset[str] = frozenset()
    ignore: frozenset[str] = frozenset()

    def nested(self, pattern: str) -> bool:
        return pattern in self.keys or pattern in self.sets

    def ignored(self, pattern: str, dotted: str) -> bool:
        """A record's field that is never compared ("notes[*].deck": derived from its cards), or inside one."""
        return any(f"{pattern}[*].{dotted}" == i or f"{pattern}[*].{dotted}".startswith(i + ".") for i in self.ignore)


@dataclass
class RecordChange:
    collection: str                 # the pattern: "notes", "notes[*].cards", "workbench"
    path: str                       # the record: "notes[id=17].cards[id=3]"
    kind: str                       # added, removed, changed
    before: Any = None              # the record as a where sees it (None when added)
    after: Any = None               # (None when removed)
    fields: tuple[str, ...] = ()    # changed: its own fields that differ, dotted

    def brief(self, limit: int = 160) -> str:
        if self.kind == CHANGED:
            parts = [f"{f}: {_short(_get(self.before, f))} -> {_short(_get(self.after, f))}" for f in self.fields[:3]]
            text = f"{self.path} changed ({'; '.join(parts)}{'; ...' if len(self.fields) > 3 else ''})"
        else:
            text = f"{self.path} {self.kind}"
        return text if len(text) <= limit else text[:limit - 1] + "…"


def _short(v: Any, limit: int = 40) -> str:
    text = "(none)" if v is _MISSING else json.dumps(v, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _get(record: Any, dotted: str) -> Any:
    cur = record
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return _MISSING
        cur = cur[part]
    return cur


# -- the actual changes -------------------------------------------------------------------------------------
def changes(start: dict, end: dict, shape: Shape) -> list[RecordChange]:
    """Every record added, removed or changed between two states."""
    out: list[RecordChange] = []
    for name in sorted(set(start) | set(end)):
        if name not in shape.ignore:
            _compare(out, shape, name, name, start.get(name, _MISSING), end.get(name, _MISSING), None, None)
    return out


def records(state: dict, pattern: str, shape: Shape) -> list[Any]:
    """Every record of one collection in a state, as a where sees it (nested ones with their "_parent")."""
    top, *steps = pattern.split("[*]")
    value = state.get(top, _MISSING)
    if value is _MISSING:
        return []
    found = [view for _, view in _members(shape, top, value, None)]
    for step in steps:  # ".cards", or "" where a dict's values are the lists
        top = _join(top, step)
        found = [view for rec in found for _, view in _members(shape, top, _nested_value(rec, step), rec)]
    return found


def _join(pattern: str, step: str) -> str:
    return f"{pattern}[*]{step}"


def _nested_value(view: Any, step: str) -> Any:
    """The nested collection inside a record view: a field (".cards"), or the record's value itself ("")."""
    if not step:
        return view.get("value", _MISSING) if isinstance(view, dict) else _MISSING
    return _get(view, step[1:])


def _members(shape: Shape, pattern: str, value: Any, parent: Any) -> Iterator[tuple[Any, Any]]:
    """(identity, record view) of each record of a collection value."""
    top = "[*]" not in pattern
    if pattern in shape.sets and isinstance(value, list):
        for v in value:
            yield _ident(v), _view({"value": v}, parent)
    elif pattern in shape.keys and isinstance(value, list):
        key = shape.keys[pattern]
        for item in value:
            ident = _ident(item.get(key) if isinstance(item, dict) else item)
            yield ident, _view(item if isinstance(item, dict) else {"value": item}, parent)
    elif top and isinstance(value, dict):
        for k, v in value.items():
            yield _ident(k), _view({"key": k, **v} if isinstance(v, dict) else {"key": k, "value": v}, parent)
    elif top:
        yield None, {"value": value}


def _ident(v: Any) -> Any:
    return json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v


def _view(record: dict, parent: Any) -> dict:
    return record if parent is None else {**record, PARENT: parent}


def _label(pattern_path: str, shape: Shape, pattern: str, ident: Any) -> str:
    if ident is None:
        return pattern_path
    key = shape.keys.get(pattern)
    return f"{pattern_path}[{key}={ident}]" if key and pattern not in shape.sets else f"{pattern_path}[{ident}]"


def _compare(out: list, shape: Shape, pattern: str, path: str, a: Any, b: Any, pa: Any, pb: Any) -> None:
    """Compare one collection (or top-level value) at both ends."""
    ma = dict(_members(shape, pattern, a, pa)) if a is not _MISSING else {}
    mb = dict(_members(shape, pattern, b, pb)) if b is not _MISSING else {}
    for ident in dict.fromkeys([*ma, *mb]):
        rpath = _label(path, shape, pattern, ident)
        ra, rb = ma.get(ident, _MISSING), mb.get(ident, _MISSING)
        if ra is _MISSING:
            out.append(RecordChange(pattern, rpath, ADDED, None, rb))
        elif rb is _MISSING:
            out.append(RecordChange(pattern, rpath, REMOVED, ra, None))
        else:
            nested = _nested_fields(shape, pattern, ra, rb)
            own = [f for f in _leaves(_strip(ra, nested), _strip(rb, nested), "") if not shape.ignored(pattern, f)]
            if own:
                out.append(RecordChange(pattern, rpath, CHANGED, ra, rb, tuple(own)))
            for step in nested:
                _compare(out, shape, _join(pattern, step), rpath + (step if step else ""),
                         _nested_value(ra, step), _nested_value(rb, step), ra, rb)


def _nested_fields(shape: Shape, pattern: str, ra: dict, rb: dict) -> list[str]:
    """The steps to a record's nested collections: "" (its value is one) or ".field"."""
    steps = [""] if shape.nested(_join(pattern, "")) else []
    for f in sorted(set(ra) | set(rb), key=str):
        if f not in ("key", PARENT) and shape.nested(_join(pattern, f".{f}")):
            steps.append(f".{f}")
    return steps


def _strip(view: dict, nested: list[str]) -> dict:
    drop = {PARENT} | {s[1:] for s in nested if s} | ({"value"} if "" in nested else set())
    return {k: v for k, v in view.items() if k not in drop}


def _leaves(a: Any, b: Any, prefix: str) -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in sorted(set(a) | set(b), key=str):
            out += _leaves(a.get(k, _MISSING), b.get(k, _MISSING), f"{prefix}.{k}" if prefix else str(k))
        return out
    return [] if a == b else [prefix]


# -- the expected ones --------------------------------------------------------------------------------------
@dataclass
class Expected:
    collection: str
    kind: str                             # added, removed, changed
    where: Pred                           # over the record before (removed, changed) or after (added)
    to: Pred | None = None                # changed: over the record after
    fields: tuple[str, ...] | None = None  # changed: the fields that may differ
    low: int = 1
    high: int | None = 1                  # None: no upper bound
    every: bool = False                   # count "all": every matching record of the start
    label: str = ""

    def fits(self, c: RecordChange, tolerated: tuple[str, ...]) -> bool:
        if c.collection != self.collection or c.kind != self.kind:
            return False
        if not _holds(self.where, c.after if c.kind == ADDED else c.before):
            return False
        if c.kind == CHANGED:
            if self.to is not None and not _holds(self.to, c.after):
                return False
            allowed = (self.fields or ()) + tolerated
            return all(_covered(f, allowed) for f in c.fields)
        return True


@dataclass
class Tolerance:
    collection: str
    why: str
    kinds: frozenset[str] = frozenset({ADDED, REMOVED, CHANGED})
    where: Pred | None = None             # over the record before or after
    fields: tuple[str, ...] | None = None  # changed: only these fields (None: any)

    def applies(self, c: RecordChange) -> bool:
        return (c.collection == self.collection and c.kind in self.kinds
                and (self.where is None or _holds(self.where, c.before) or _holds(self.where, c.after)))

    def covers(self, c: RecordChange) -> bool:
        if not self.applies(c):
            return False
        return c.kind != CHANGED or self.fields is None or all(_covered(f, self.fields) for f in c.fields)


def _holds(pred: Pred, record: Any) -> bool:
    try:
        return record is not None and bool(pred(record))
    except Exception:  # a where over a shape it does not fit simply does not match
        return False


def _covered(changed: str, allowed: tuple[str, ...]) -> bool:
    """A changed leaf is covered by an allowed field that is it, encloses it or lies inside it."""
    return any(changed == f or changed.startswith(f + ".") or f.startswith(changed + ".") for f in allowed)


@dataclass
class Outcome:
    unmet: list[str]           # expected changes made fewer times than asked: "notes: add {...}: 0 of 1"
    collateral: list[RecordChange]
    matched: list[tuple[str, str]]  # (expected label, the change's path)
    tolerated: list[tuple[str, str]]  # (the change's path, why)

    @property
    def ok(self) -> bool:
        return not self.unmet and not self.collateral


def match(actual: list[RecordChange], expected: list[Expected], tolerances: list[Tolerance],
          start: dict, shape: Shape) -> Outcome:
    """Match actual changes to expected ones one to one (required counts first, then up to each maximum)."""
    tolerated_fields = [_tolerated_fields(c, tolerances) for c in actual]
    fits = [[i for i, c in enumerate(actual) if e.fits(c, tolerated_fields[i])] for e in expected]
    required: list[int] = []   # one entry per slot: the expectation's index
    optional: list[int] = []
    for n, e in enumerate(expected):
        low, high = e.low, e.high
        if e.every:
            low = high = sum(1 for r in records(start, e.collection, shape)
                             if _holds(e.where, r) and not (e.to is not None and _holds(e.to, r)))
        required += [n] * low
        room = len(fits[n]) if high is None else max(0, high - low)
        optional += [n] * min(room, len(fits[n]))
    owner: dict[int, int] = {}  # actual change -> slot
    slots = required + optional

    def augment(slot: int, seen: set[int]) -> bool:
        for i in fits[slots[slot]]:
            if i in seen:
                continue
            seen.add(i)
            if i not in owner or augment(owner[i], seen):
                owner[i] = slot
                return True
        return False

    filled = [augment(s, set()) for s in range(len(required))]
    for s in range(len(required), len(slots)):
        augment(s, set())
    unmet = []
    for n, e in enumerate(expected):
        want = required.count(n)
        got = sum(1 for s, ok in enumerate(filled) if ok and required[s] == n)
        if got < want:
            unmet.append(f"{e.label}: {got} of {want}")
    matched = [(expected[slots[s]].label, actual[i].path) for i, s in sorted(owner.items())]
    collateral, tolerated = [], []
    for i, c in enumerate(actual):
        if i in owner:
            continue
        why = next((t.why for t in tolerances if t.covers(c)), None)
        if why is None:
            collateral.append(c)
        else:
            tolerated.append((c.path, why))
    return Outcome(unmet, collateral, matched, tolerated)


def _tolerated_fields(c: RecordChange, tolerances: list[Tolerance]) -> tuple[str, ...]:
    """Fields of a changed record that a tolerance lets change along with an expected change."""
    out: list[str] = []
    for t in tolerances:
        if c.kind == CHANGED and t.applies(c) and t.fields is not None:
            out += t.fields
    return tuple(out)


COUNT = re.compile(r"^(\d+)\.\.(\d*)$")


def parse_count(count: int | str) -> tuple[int, int | None, bool]:
    """(low, high, every) of a count: 2, "0..1", "1.." or "all"; ValueError otherwise."""
    if isinstance(count, bool):
        raise ValueError("a count is a number, 'N..M', 'N..' or 'all'")
    if isinstance(count, int):
        if count < 0:
            raise ValueError("a count cannot be negative")
        return count, count, False
    if count == "all":
        return 0, 0, True
    m = COUNT.match(str(count))
    if not m:
        raise ValueError(f"'{count}' is not a count (a number, 'N..M', 'N..' or 'all')")
    low, high = int(m.group(1)), int(m.group(2)) if m.group(2) else None
    if high is not None and high < low:
        raise ValueError(f"'{count}': the upper bound is below the lower")
    return low, high, False


def where_fields(where: dict) -> tuple[str, ...]:
    """The fields a where names (its dotted paths): what a `change ... to` may change by default."""
    return tuple(k for k in where if not str(k).startswith("$"))
