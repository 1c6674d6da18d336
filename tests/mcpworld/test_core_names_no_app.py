"""The core never names an app: no identifier and no string in mcpworld/, gateway/, evaluator/ or
probe_runtime/ (docstrings and command-line help aside) mentions an app id, and neither does the Makefile
outside its comments. Apps are found from their folders."""

import ast
import re
import tomllib
from pathlib import Path

import pytest

from mcpworld import paths

APP_IDS = sorted({tomllib.loads(f.read_text())["id"] for f in paths.APPS_DIR.glob("*/app.toml")} | {"counter"})
CORE_FILES = sorted(f for d in ("mcpworld", "gateway", "evaluator", "probe_runtime")
                    for f in (paths.CODE_ROOT / d).rglob("*.py"))


def _names_an_app(text: str) -> str | None:
    for app in APP_IDS:
        if re.search(rf"(?<![a-z0-9_]){re.escape(app)}(?![a-z0-9])", text, re.I):
            return app
    return None


def _code_strings_and_names(tree: ast.AST):
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    help_texts = {id(k.value) for n in ast.walk(tree) if isinstance(n, ast.Call)
                  for k in n.keywords if k.arg == "help"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings | help_texts:
            yield node.lineno, node.value
        elif isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute):
            yield node.lineno, node.attr


def test_there_are_apps_to_look_for():
    assert len(APP_IDS) >= 3 and CORE_FILES


@pytest.mark.parametrize("path", CORE_FILES, ids=lambda p: str(p.relative_to(paths.CODE_ROOT)))
def test_core_module_names_no_app(path: Path):
    found = [(line, text) for line, text in _code_strings_and_names(ast.parse(path.read_text()))
             if _names_an_app(text)]
    assert not found, f"{path}: names an app in code: {found}"


def test_makefile_names_no_app():
    lines = [line for line in (paths.CODE_ROOT / "Makefile").read_text().splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in lines if _names_an_app(line)]
