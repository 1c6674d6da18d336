"""Declarative field predicates over event payloads.

A `where` is a mapping from a dotted path into the payload to a spec. A spec is either a
literal (equality) or a mapping of operators, each starting with `$`:

    {"fields.Front": "hello", "tags": {"$contains": "quote"},
     "notes": {"$any": {"deck": "Default", "fields.Back": {"$regex": "^x=1$"}}}}

Operators: $eq $ne $in $nin $gt $gte $lt $lte $contains $icontains $contains_all $regex $not $exists
$len (a spec applied to the length), $any / $all / $none (a where applied to list items),
$count (a spec applied to the number of list items matching a where: {"$count": {"where": W, "is": S}}).
Everything is checked when the task loads (`compile_where`), not when the first event arrives.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Pred = Callable[[Any], bool]
_MISSING = object()


class PredicateError(ValueError):
    def __init__(self, path: str, problem: str):
        self.path, self.problem = path, problem
        super().__init__(f"{path}: {problem}")


def lookup(payload: Any, dotted: str) -> Any:
    """The value at a dotted path. A key that itself holds dots ("scheduling.rollover" in Anki's
    preferences) is matched whole: at each level the longest run of parts that is a key wins."""
    cur, parts, i = payload, dotted.split("."), 0
    while i < len(parts):
        if isinstance(cur, Mapping):
            for j in range(len(parts), i, -1):
                key = ".".join(parts[i:j])
                if key in cur:
                    cur, i = cur[key], j
                    break
            else:
                return _MISSING
        elif isinstance(cur, list) and parts[i].isdigit() and int(parts[i]) < len(cur):
            cur, i = cur[int(parts[i])], i + 1
        else:
            return _MISSING
    return cur


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _cmp(op: Callable[[Any, Any], bool], ref: Any) -> Pred:
    def check(v: Any) -> bool:
        if _num(ref):
            return _num(v) and op(v, ref)
        return isinstance(v, str) and op(v, ref)
    return check


def _contains(ref: Any, fold: bool) -> Pred:
    def check(v: Any) -> bool:
        if isinstance(v, str) and isinstance(ref, str):
            return (ref.lower() in v.lower()) if fold else (ref in v)
        if isinstance(v, list):
            if fold and isinstance(ref, str):
                return any(isinstance(x, str) and x.lower() == ref.lower() for x in v)
            return ref in v
        return False
    return check


def _list_of(pred: Pred, quant: Callable[[Any], bool]) -> Pred:
    return lambda v: isinstance(v, list) and quant(pred(x) for x in v)


def compile_spec(spec: Any, path: str) -> Pred:
    if not (isinstance(spec, Mapping) and spec and all(str(k).startswith("$") for k in spec)):
        if isinstance(spec, Mapping) and any(str(k).startswith("$") for k in spec):
            raise PredicateError(path, "mixes $operators with plain keys")
        return lambda v: v is not _MISSING and v == spec
    preds: list[Pred] = []
    for op, arg in spec.items():
        where = f"{path}.{op}"
        match op:
            case "$eq":
                preds.append(lambda v, a=arg: v is not _MISSING and v == a)
            case "$ne":
                preds.append(lambda v, a=arg: v != a)
            case "$in" | "$nin":
                if not isinstance(arg, list):
                    raise PredicateError(where, "expects a list")
                inside = (lambda v, a=arg: v in a)
                preds.append(inside if op == "$in" else (lambda v, f=inside: not f(v)))
            case "$gt" | "$gte" | "$lt" | "$lte":
                if not (_num(arg) or isinstance(arg, str)):
                    raise PredicateError(where, "expects a number or a string")
                fn = {"$gt": lambda a, b: a > b, "$gte": lambda a, b: a >= b,
                      "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b}[op]
                preds.append(_cmp(fn, arg))
            case "$contains" | "$icontains":
                preds.append(_contains(arg, fold=op == "$icontains"))
            case "$contains_all":
                if not isinstance(arg, list):
                    raise PredicateError(where, "expects a list")
                parts = [_contains(a, fold=False) for a in arg]
                preds.append(lambda v, ps=parts: all(p(v) for p in ps))
            case "$regex":
                try:
                    rx = re.compile(arg, re.S)
                except (re.error, TypeError) as e:
                    raise PredicateError(where, f"bad regular expression: {e}") from None
                preds.append(lambda v, r=rx: isinstance(v, str) and r.search(v) is not None)
            case "$not":
                inner = compile_spec(arg, where)
                preds.append(lambda v, p=inner: not p(v))
            case "$exists":
                preds.append(lambda v, a=bool(arg): (v is not _MISSING) == a)
            case "$len":
                inner = compile_spec(arg, where)
                preds.append(lambda v, p=inner: hasattr(v, "__len__") and v is not _MISSING and p(len(v)))
            case "$any" | "$all" | "$none":
                item = compile_where(arg, where)
                quant = {"$any": any, "$all": all, "$none": lambda it: not any(it)}[op]
                preds.append(_list_of(item, quant))
            case "$count":
                if not (isinstance(arg, Mapping) and set(arg) == {"where", "is"}):
                    raise PredicateError(where, 'expects {"where": {...}, "is": spec}')
                item, count = compile_where(arg["where"], where + ".where"), compile_spec(arg["is"], where + ".is")
                preds.append(lambda v, i=item, c=count: isinstance(v, list) and c(sum(1 for x in v if i(x))))
            case _:
                raise PredicateError(where, f"unknown operator (known: {', '.join(OPERATORS)})")
    return lambda v: all(p(v) for p in preds)


OPERATORS = ("$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$contains", "$icontains", "$contains_all",
             "$regex", "$not", "$exists", "$len", "$any", "$all", "$none", "$count")


def compile_where(where: Any, path: str = "where") -> Pred:
    """Compile a where-mapping into a predicate over a payload; raises PredicateError."""
    if not isinstance(where, Mapping):
        raise PredicateError(path, f"expects an object of field: spec, got {type(where).__name__}")
    checks = []
    for field, spec in where.items():
        if not field or str(field).startswith("$"):
            raise PredicateError(f"{path}.{field}", "a field path cannot be empty or start with $")
        checks.append((field, compile_spec(spec, f"{path}.{field}")))
    return lambda payload: all(p(lookup(payload, f)) for f, p in checks)
