"""Where things are. CODE_ROOT holds mcpworld's packages (the core, the gateway, the evaluator, the probe
runtime, containers/); ROOT holds the content: apps/, hooks/, mcp_servers/, snapshots/, tasks/.
They are the same checkout unless MCPWORLD_ROOT points ROOT at another content tree (an app kept
outside this repository, or the fixture app of the tests)."""

from __future__ import annotations

import os
from pathlib import Path

CODE_ROOT = Path(__file__).resolve().parent.parent
ROOT = Path(os.environ.get("MCPWORLD_ROOT") or CODE_ROOT).resolve()
APPS_DIR = ROOT / "apps"
TASKS_DIR = ROOT / "tasks"
SNAPSHOTS_DIR = ROOT / "snapshots"
HOOKS_DIR = ROOT / "hooks"
RUNS_DIR = ROOT / "runs"
RUNTIME_DIR = CODE_ROOT / "probe_runtime"
CONTAINERS_DIR = CODE_ROOT / "containers"


def new_run_dir(label: str) -> Path:
    """runs/<time>-<label>: where a command keeps what it ran, unless told otherwise."""
    import time
    return RUNS_DIR / f"{time.strftime('%Y%m%d-%H%M%S')}-{label}"


def python_path() -> str:
    """PYTHONPATH for the parts mcpworld starts on the host (MCP servers): the content root first (its
    mcp_servers/), then the code root (the probe runtime and anything the content imports from it)."""
    roots = [str(ROOT)] + ([str(CODE_ROOT)] if CODE_ROOT != ROOT else [])
    return os.pathsep.join(roots)
