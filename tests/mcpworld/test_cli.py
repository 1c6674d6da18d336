"""`mcpworld run` and `mcpworld report` as a user runs them."""

import json
import subprocess
import sys

from mcpworld import paths


def mcpworld(*args, **kw):
    return subprocess.run([sys.executable, "-m", "mcpworld.cli", *args], cwd=paths.ROOT, capture_output=True,
                          text=True, timeout=600, **kw)


def test_run_writes_results_and_prints_the_table(tmp_path):
    out = tmp_path / "run"
    r = mcpworld("run", "--task", "anki/164", "--task", "anki/157", "--mode", "mcp", "--mode", "hybrid",
                 "--agent", "oracle", "--out", str(out))
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["trials"] == 4 and summary["sr"] == 1.0 and summary["kscr"] == 1.0
    assert set(summary["per_task"]) == {"anki/164:mcp", "anki/164:hybrid", "anki/157:mcp", "anki/157:hybrid"}
    assert "Overview per mode" in r.stdout and "100.0%" in r.stdout
    run = json.loads((out / "run.json").read_text())
    assert run["agent"] == "oracle" and set(run["tasks"]) == {"anki/164", "anki/157"}
    trial = out / "trials" / "anki-164__mcp__0"
    for name in ("events.jsonl", "tool_calls.jsonl", "final.png", "result.json", "tools.json"):
        assert (trial / name).is_file(), name
    result = json.loads((trial / "result.json").read_text())
    assert result["verdict"]["key_steps"][0]["reached"] and result["timings"]["app_ready_s"] > 0
    assert len((out / "results.jsonl").read_text().splitlines()) == 4

    rep = mcpworld("report", str(out), "--json")
    assert rep.returncode == 0
    again = json.loads(rep.stdout)
    assert (again["sr"], again["kscr"], again["per_task"]) == (summary["sr"], summary["kscr"], summary["per_task"])


def test_null_agent_run_and_bad_arguments(tmp_path):
    out = tmp_path / "run"
    r = mcpworld("run", "--task", "anki/164", "--mode", "mcp", "--agent", "null", "--out", str(out))
    assert r.returncode == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sr"] == 0.0 and summary["failures"] == {"evaluated_failed": 1}
    assert mcpworld("run", "--mode", "tui").returncode == 2
    bad = mcpworld("run", "--task", "anki/9999")
    assert bad.returncode == 2 and "unknown task" in bad.stderr
    assert mcpworld("run", "--task", "anki/162", "--mode", "gui").returncode == 2  # the task declares no gui mode
    assert mcpworld("report", str(tmp_path)).returncode == 2


def test_docker_backend_without_an_engine_is_one_clear_error(tmp_path):
    import os

    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    for args in (("run", "--task", "anki/164", "--mode", "mcp", "--out", str(tmp_path / "run")),
                 ("tasks", "verify", "--task", "anki/164")):
        r = mcpworld(*args, "--backend", "docker", env=env)
        assert r.returncode == 2 and "no Docker engine answers" in r.stderr, (args, r.stderr[-500:])
    assert not (tmp_path / "run").exists()


def test_tasks_list_and_show():
    r = mcpworld("tasks", "list", "--app", "anki")
    assert r.returncode == 0 and "anki/161" in r.stdout
    r = mcpworld("tasks", "show", "anki/161")
    assert r.returncode == 0 and "Jupiter" in r.stdout
