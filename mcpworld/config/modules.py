"""Load a function from a Python file that an app or a task names ('file.py:function')."""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Callable
from pathlib import Path

from mcpworld.errors import ConfigError


def load_function(target: Path, func: str, file: Path | str, field: str) -> Callable:
    """`func` from the file `target`; a ConfigError naming the config `file` and `field` when the file is
    missing, does not import, or has no such function."""
    if not target.is_file():
        raise ConfigError(file, field, f"no file {target}")
    name = "mcpworld_loaded_" + hashlib.sha1(str(target.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, target)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # a broken module is a config error, with its reason
        raise ConfigError(file, field, f"cannot import {target}: {type(e).__name__}: {e}") from None
    fn = getattr(module, func, None)
    if not callable(fn):
        raise ConfigError(file, field, f"{target} has no function '{func}'")
    return fn


def load_ref(folder: Path, ref: str, file: Path | str, field: str) -> Callable:
    """A 'file.py:function' reference to a file in `folder`."""
    name, _, func = ref.partition(":")
    if not name or not func or not (folder / name).is_file():
        raise ConfigError(file, field, f"'{ref}' must be 'file.py:function' naming a file in {folder}")
    return load_function(folder / name, func, file, field)
