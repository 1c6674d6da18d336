"""Where the repository's data folders are. MCPWORLD_ROOT overrides the checkout root."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(os.environ.get("MCPWORLD_ROOT") or Path(__file__).resolve().parent.parent)
APPS_DIR = ROOT / "apps"
TASKS_DIR = ROOT / "tasks"
SNAPSHOTS_DIR = ROOT / "snapshots"
HOOKS_DIR = ROOT / "hooks"
RUNS_DIR = ROOT / "runs"


def new_run_dir(label: str) -> Path:
    """runs/<time>-<label>: where a command keeps what it ran, unless told otherwise."""
    import time
    return RUNS_DIR / f"{time.strftime('%Y%m%d-%H%M%S')}-{label}"
