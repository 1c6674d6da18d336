"""Turn pydantic's validation errors into `file: field: problem` errors."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from mcpworld.errors import ConfigError, ConfigErrors


def loc_str(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def from_validation(path: Path, err: ValidationError) -> ConfigErrors:
    return ConfigErrors([ConfigError(path, loc_str(e["loc"]), e["msg"]) for e in err.errors()])
