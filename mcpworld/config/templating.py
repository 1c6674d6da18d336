"""`{name}` placeholders, with `{{` / `}}` as escapes for literal braces (as in str.format).

Only `{identifier}` is a placeholder; any other brace is literal, so regular expressions
(`\\{\\{c\\d+::`, `x{2,3}`) need no escaping. `{{front}}` is the literal text `{front}`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcpworld.errors import ConfigError

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_.]*)\}")


def placeholders(template: str) -> list[str]:
    """The placeholder names in a template, in order."""
    return [m.group(1) for m in _TOKEN.finditer(template) if m.group(1)]


def expand(template: str, values: Mapping[str, Any], later: frozenset[str] = frozenset()) -> str:
    """Fill every placeholder; KeyError names the first unknown one.

    Names in `later` are left as they are, escapes included, for a second expand() once their
    values exist (a run's {home}, ports, ...)."""
    if later:
        def keep(m: re.Match) -> str:
            name = m.group(1)
            if name is None or name in later:
                return m.group(0)
            if name not in values:
                raise KeyError(name)
            return str(values[name]).replace("{", "{{").replace("}", "}}")
        return _TOKEN.sub(keep, template)

    def repl(m: re.Match) -> str:
        name = m.group(1)
        if name is None:
            return m.group(0)[0]
        if name not in values:
            raise KeyError(name)
        return str(values[name])
    return _TOKEN.sub(repl, template)


def expand_tree(obj: Any, values: Mapping[str, Any], later: frozenset[str] = frozenset()) -> Any:
    """expand() every string inside nested lists/dicts (keys too, except $operators)."""
    if isinstance(obj, str):
        return expand(obj, values, later)
    if isinstance(obj, list):
        return [expand_tree(x, values, later) for x in obj]
    if isinstance(obj, dict):
        return {expand(k, values, later) if not k.startswith("$") else k: expand_tree(v, values, later)
                for k, v in obj.items()}
    return obj


def check_placeholders(text: str, allowed: set[str], file: Path, field: str, what: str) -> list[ConfigError]:
    """ConfigErrors for every placeholder in `text` that is not among `allowed` (named as `what`)."""
    try:
        names = placeholders(text)
    except ValueError as e:
        return [ConfigError(file, field, f"bad braces: {e}")]
    return [ConfigError(file, field, f"unknown placeholder '{{{n}}}' (known {what}: {', '.join(sorted(allowed)) or 'none'})")
            for n in names if n not in allowed]
