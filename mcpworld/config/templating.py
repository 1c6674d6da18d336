"""`{name}` placeholders as in str.format (`{{` escapes), but resolved from a flat mapping."""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

_FMT = string.Formatter()


def placeholders(template: str) -> list[str]:
    """The placeholder names in a template; raises ValueError on unbalanced braces."""
    return [name for _, name, _, _ in _FMT.parse(template) if name is not None]


def expand(template: str, values: Mapping[str, Any]) -> str:
    """Fill every placeholder; KeyError names the first unknown one."""
    out = []
    for literal, name, spec, conv in _FMT.parse(template):
        out.append(literal)
        if name is None:
            continue
        if name not in values:
            raise KeyError(name)
        value = values[name]
        out.append(format(value, spec or ""))
    return "".join(out)


def expand_tree(obj: Any, values: Mapping[str, Any]) -> Any:
    """expand() every string inside nested lists/dicts (keys too)."""
    if isinstance(obj, str):
        return expand(obj, values)
    if isinstance(obj, list):
        return [expand_tree(x, values) for x in obj]
    if isinstance(obj, dict):
        return {expand(k, values) if not k.startswith("$") else k: expand_tree(v, values) for k, v in obj.items()}
    return obj
