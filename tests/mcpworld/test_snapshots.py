"""Every app's snapshot builder (snapshots/<app>/build.py) runs from what is installed, rewrites its
snapshots, and leaves every snapshot the app's tasks restore in place (some are committed inputs, such
as media files, rather than built). It runs on a copy, so the committed snapshots (part of each task's
proven content) stay as they are."""

import shutil
import subprocess
import sys

import pytest

from mcpworld import paths
from mcpworld.config.load import load_apps, load_tasks

APPS = sorted(load_apps())
TASKS = load_tasks()


@pytest.mark.parametrize("app_id", APPS)
def test_the_snapshot_builder_makes_what_the_tasks_restore(app_id, tmp_path):
    source = paths.SNAPSHOTS_DIR / app_id
    if not (source / "build.py").is_file():
        pytest.skip(f"{app_id} builds no snapshots")
    copy = tmp_path / "snapshots" / app_id
    shutil.copytree(source, copy)
    before = {p: p.stat().st_mtime_ns for p in copy.rglob("*") if p.is_file()}
    r = subprocess.run([sys.executable, str(copy / "build.py")], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    written = [p for p in copy.rglob("*") if p.is_file() and before.get(p) != p.stat().st_mtime_ns]
    assert written, "the builder wrote nothing"
    needed = {cd.from_ for rt in TASKS.values() if rt.app.id == app_id for cd in rt.task.context_data}
    missing = [n for n in sorted(needed) if not (tmp_path / "snapshots" / n).exists()]
    assert not missing, f"the builder did not make {missing}"
