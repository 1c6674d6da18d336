"""`mcpworld bench run` produces every figure (at the smoke size); no figure is held to a threshold here."""

import json
import os
import subprocess
import sys

import pytest

from mcpworld import paths
from mcpworld.bench.stats import percentile, stat


def test_percentiles_by_nearest_rank():
    xs = list(range(1, 101))  # 1..100
    assert (percentile(xs, 50), percentile(xs, 95), percentile(xs, 99), percentile(xs, 100)) == (50, 95, 99, 100)
    assert percentile([3.0], 99) == 3.0
    s = stat([4.0, 1.0, 3.0, 2.0])
    assert (s.n, s.min, s.median, s.p95, s.max) == (4, 1.0, 2.5, 4.0, 4.0)
    with pytest.raises(ValueError):
        stat([])


def test_bench_produces_every_figure(tmp_path):
    """Every kind of figure, on two apps: Anki (an in-app probe) and OBS (a Frida bridge). The other apps'
    figures come from the same code with their own bench tables; each of those tasks is proven by
    `tasks verify`, so measuring all eight here (another six minutes) would prove little more."""
    out = tmp_path / "bench.json"
    r = subprocess.run([sys.executable, "-m", "mcpworld.cli", "bench", "run", "--size", "smoke", "--out", str(out),
                        "--app", "anki", "--app", "obs"],
                       cwd=paths.ROOT, capture_output=True, text=True, timeout=1800, env={**os.environ, "COLUMNS": "200"})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["errors"] == {}
    names = {f["name"] for f in result["figures"]}
    expected = {
        "Anki: reset + launch to ready (a trial)", "Anki: launch to ready", "Anki: rsync of the snapshot",
        "OBS Studio: reset + launch to ready (a trial)", "OBS Studio: rsync of the snapshot",
        "inotify watcher", "in-app probe (Anki)", "Frida bridge (OBS Studio)",
        "in-app probe (Anki), calls back to back", "Frida bridge (OBS Studio), calls back to back",
        "screenshot through the computer tool (capture; PNG when read)", "action to a screenshot showing its effect",
        "typed characters per second, two CPU burners beside",
        "Anki: drawing after ready", "Anki: longest pause in drawing while it starts",
        "MCP call through the gateway, in process (the registry)", "MCP call through the gateway, streamable HTTP",
        "MCP call through the gateway, stdio", "tools/list through the gateway, HTTP", "tools/list through the gateway, stdio",
        "a no-op MCP tool in another process, streamable HTTP", "a no-op MCP tool in another process, stdio",
        "the gateway alone, a no-op server behind it, streamable HTTP",
        "the gateway alone, a no-op server behind it, stdio",
        "Anki: bare cold start, window mapped", "OBS Studio: bare cold start, window mapped, port up",
        "1 Anki environment(s) side by side", "2 Anki environment(s) side by side",
    }
    assert expected <= names, expected - names
    for f in result["figures"]:
        v = f["value"]
        # what an app drew after ready is 0 when readiness waited long enough, and a pause in drawing may
        # be 0 for an app drawn as its window maps; every other figure is a time or a rate
        floor = 0 if f["name"].endswith(("drawing after ready", "while it starts")) else 1e-9
        assert v["n"] >= 1 and floor <= v["min"] <= v["median"] <= v["p99"] <= v["max"], f
        if f["part"] in ("latency", "gateway") and "tools/list" not in f["name"] and "no-op" not in f["name"]:
            assert f["baseline"] and f["baseline"]["median"] > 0, f["name"]
    latency = {f["name"]: f for f in result["figures"] if f["part"] == "latency"}
    assert latency["in-app probe (Anki)"]["value"]["n"] >= 30 and latency["inotify watcher"]["value"]["n"] == 30
    assert result["machine"]["cpus"] >= 1 and "median" in r.stdout
    md = subprocess.run([sys.executable, "-m", "mcpworld.cli", "bench", "show", str(out), "--markdown"], cwd=paths.ROOT,
                        capture_output=True, text=True, timeout=120)
    assert md.returncode == 0 and md.stdout.count("\n| [") == len(result["figures"])


def test_bench_of_one_app_names_an_unknown_one():
    r = subprocess.run([sys.executable, "-m", "mcpworld.cli", "bench", "run", "--size", "smoke", "--part", "reset",
                        "--app", "no-such-app"], cwd=paths.ROOT, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "COLUMNS": "200"})
    assert r.returncode != 0 and "no-such-app" in r.stderr and "anki" in r.stderr, r.stderr


def test_the_memory_part_keeps_each_apps_peak_with_the_app():
    """`--part memory` measures an app's environment against the bare desktop and writes the peak that
    `--parallel auto` admits by (the file is put back as it was)."""
    kept = paths.ROOT / "apps" / "anki" / "measured.json"
    before = kept.read_text() if kept.exists() else None
    try:
        r = subprocess.run([sys.executable, "-m", "mcpworld.cli", "bench", "run", "--size", "smoke", "--part", "memory",
                            "--app", "anki", "--out", os.devnull], cwd=paths.ROOT, capture_output=True, text=True,
                           timeout=600, env={**os.environ, "COLUMNS": "200"})
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        measured = json.loads(kept.read_text())
        from mcpworld.admission import app_peak_mb
        assert app_peak_mb(kept.parent) == measured["peak_mb_per_env"]
        assert 200 < measured["peak_mb_per_env"] < 8000  # Anki's Qt web engine: several hundred MB
    finally:
        if before is None:
            kept.unlink(missing_ok=True)
        else:
            kept.write_text(before)
