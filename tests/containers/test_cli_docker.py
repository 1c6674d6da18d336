"""The docker backend as a user drives it: `run --backend docker` with its live view, `view`, `bench startup`,
`images list`."""

import json
import re
import os
import subprocess
import sys
import threading
import time
import urllib.request

from mcpworld import paths


def mcpworld(*args, **kw):
    # a wide "terminal": rich wraps tables and messages at 80 columns otherwise
    return subprocess.run([sys.executable, "-m", "mcpworld.cli", *args], cwd=paths.ROOT, capture_output=True,
                          text=True, timeout=900, env={**os.environ, "COLUMNS": "200"}, **kw)


def test_run_in_a_container_prints_the_live_view_and_view_reopens_it(tmp_path):
    out = tmp_path / "run"
    seen = {}

    def watch():
        # while the run is on, `mcpworld view RUN` names the live page, and the page answers
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and "view" not in seen:
            if (out / "view.json").exists():
                r = mcpworld("view", str(out))
                if r.returncode == 0:
                    seen["view"] = r.stdout
                    url = r.stdout.split()[-1]
                    seen["page"] = urllib.request.urlopen(url, timeout=10).read().decode()
            time.sleep(0.2)

    watcher = threading.Thread(target=watch)
    watcher.start()
    # a GUI trial, long enough for the watcher to look at it live
    r = mcpworld("run", "--task", "anki/161", "--mode", "gui", "--backend", "docker", "--out", str(out))
    watcher.join()
    assert r.returncode == 0, r.stderr
    assert "live view: http://" in r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sr"] == 1.0
    assert json.loads((out / "run.json").read_text())["backend"] == "docker"
    assert "anki-161__gui__0" in seen.get("view", ""), seen
    assert "noVNC" in seen["page"]
    # afterwards the container is gone, and view says so
    r = mcpworld("view", str(out))
    assert r.returncode == 1 and "has ended" in r.stderr


def test_view_of_a_local_run_is_a_clear_error(tmp_path):
    r = mcpworld("view", str(tmp_path))
    assert r.returncode == 2 and "no live view" in r.stderr


def test_bench_startup_reports_docker_against_the_local_baseline():
    r = mcpworld("bench", "startup", "--task", "anki/161", "--trials", "1", "--json")
    assert r.returncode == 0, r.stderr
    local, docker = json.loads(r.stdout)
    assert (local["backend"], docker["backend"]) == ("local", "docker")
    for fig in (local, docker):
        assert not fig["failures"], fig["failures"]
        assert fig["phases"]["open_s"] > 0 and fig["phases"]["app_ready_s"] > 0 and fig["phases"]["reset_s"] > 0
    assert docker["image_cached_s"] is not None and docker["image_cold_s"] is None
    table = mcpworld("bench", "startup", "--task", "anki/161", "--trials", "1")
    assert table.returncode == 0 and "docker / local" in table.stdout
    # the ratio column holds a figure like 1.8x for each phase
    assert re.search(r"\d+(\.\d+)?x\b", table.stdout), table.stdout


def test_images_list_shows_the_built_images():
    r = mcpworld("images", "list")
    assert r.returncode == 0, r.stderr
    for tag in ("mcpworld/xfce:latest", "mcpworld/kde:latest", "mcpworld/xfce-anki:latest", "mcpworld/xfce-obs:latest"):
        assert tag in r.stdout
