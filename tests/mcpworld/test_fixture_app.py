"""An app is its folders. A small fixture app of our own (tests/fixture_app: a real X program, its Python
probe, its MCP server, its snapshot and a task) is copied into an empty content tree, and everything a
user does with an app works on it through the `mcpworld` command alone, without any core file changing:
validate, run the oracle in every mode, the null agent and a near miss, verify and record, and detect a
task changed after its record."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from mcpworld import paths

FIXTURE = Path(__file__).parents[1] / "fixture_app"
CORE = ("mcpworld", "gateway", "evaluator", "probe_runtime", "containers", "Makefile", "pyproject.toml")


def core_digest() -> str:
    h = hashlib.sha256()
    for name in CORE:
        root = paths.CODE_ROOT / name
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        for f in files:
            h.update(str(f.relative_to(paths.CODE_ROOT)).encode() + f.read_bytes())
    return h.hexdigest()


def mcpworld(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mcpworld.cli", *args], cwd=root, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "MCPWORLD_ROOT": str(root), "COLUMNS": "80"})


def summary(run: Path) -> dict:
    return json.loads((run / "summary.json").read_text())


def test_a_new_app_runs_from_its_folders_alone(tmp_path):
    before = core_digest()
    root = tmp_path / "content"
    shutil.copytree(FIXTURE, root)
    for folder in root.parents:  # the app's user runs the app from here: passable, as `make setup` makes them
        folder.chmod(folder.stat().st_mode | 0o001)
    assert not (paths.CODE_ROOT / "apps" / "counter").exists()

    r = mcpworld(root, "tasks", "validate")
    assert r.returncode == 0 and "1 app(s), 1 task(s)" in r.stdout, r.stderr

    r = mcpworld(root, "run", "--mode", "gui", "--mode", "mcp", "--mode", "hybrid", "--out", str(tmp_path / "oracle"))
    assert r.returncode == 0, r.stderr
    s = summary(tmp_path / "oracle")
    assert {m: g["sr"] for m, g in s["per_mode"].items()} == {"gui": 1.0, "mcp": 1.0, "hybrid": 1.0}
    assert "3 pass 0 fail" in r.stderr  # the live progress line's counts

    r = mcpworld(root, "run", "--mode", "gui", "--agent", "null", "--out", str(tmp_path / "null"))
    assert r.returncode == 0 and summary(tmp_path / "null")["overall"]["sr"] == 0.0, r.stderr

    near = f"{sys.executable} {root / 'near_miss_agent.py'} {{prompt}}"
    r = mcpworld(root, "run", "--mode", "mcp", "--agent", "command", "--command", near, "--out", str(tmp_path / "near"))
    assert r.returncode == 0, r.stderr
    trial = json.loads(next((tmp_path / "near" / "trials").glob("*/result.json")).read_text())
    # the asked item never added, and another one added instead: the wrong change fails it as collateral
    assert not trial["success"] and trial["failure"] == "collateral" and trial["tool_calls"] == 1

    # proofs: none yet; verify records one; a changed task loses it
    r = mcpworld(root, "tasks", "verify", "--check")
    assert r.returncode == 1 and "counter/1: never verified" in r.stdout
    r = mcpworld(root, "tasks", "verify", "--app", "counter")
    assert r.returncode == 0, r.stdout + r.stderr
    record = json.loads((root / "tasks" / "counter" / "verified.json").read_text())["tasks"]["counter/1"]
    assert set(record["oracle"]) == {"gui", "mcp", "hybrid"} and all(p["passed"] for p in record["oracle"].values())
    assert record["null"]["passed"] is False and record["null"]["failure"] == "evaluated_failed"
    assert mcpworld(root, "tasks", "verify", "--check").returncode == 0
    task = root / "tasks" / "counter" / "1" / "task.json"
    task.write_text(task.read_text().replace('"apple"', '"pear"'))
    r = mcpworld(root, "tasks", "verify", "--check")
    assert r.returncode == 1 and "counter/1: its content changed" in r.stdout

    assert core_digest() == before, "adding the app changed a core file"


def crashing_app(tmp_path: Path, starts_that_crash: int) -> Path:
    """The fixture app as a content tree, its launch wrapped so that its first starts die of SIGSEGV
    (as OBS does now and then while it starts): each start that crashes takes one marker folder."""
    root = tmp_path / "content"
    shutil.copytree(FIXTURE, root)
    for folder in root.parents:
        folder.chmod(folder.stat().st_mode | 0o001)
    markers = tmp_path / "crashes"
    markers.mkdir(mode=0o777)
    markers.chmod(0o777)  # the app's user takes them
    crash = " || ".join(f"mkdir {markers / str(n)} 2>/dev/null" for n in range(starts_that_crash))
    app_toml = root / "apps" / "counter" / "app.toml"
    app_toml.write_text(app_toml.read_text().replace(
        'command = ["{python}",', f'command = ["sh", "-c", "if {crash}; then kill -SEGV $$; fi; exec \\"$0\\" \\"$@\\"", "{{python}}",', 1))  # the launch, not the MCP server
    return root


def test_an_app_that_crashes_while_starting_gets_one_fresh_start(tmp_path):
    root = crashing_app(tmp_path, starts_that_crash=1)
    r = mcpworld(root, "run", "--mode", "mcp", "--out", str(tmp_path / "run"))
    assert r.returncode == 0, r.stderr
    trial = next((tmp_path / "run" / "trials").iterdir())
    result = json.loads((trial / "result.json").read_text())
    assert result["success"] and result["setup_attempts"] == 2
    first = json.loads((trial / "setup-attempts" / "1" / "result.json").read_text())
    assert first["failure"] == "setup_error" and "exited with code -11 before it was ready" in first["failure_detail"]
    assert first["run_id"] != result["run_id"]  # a fresh start: new credentials, new events
    assert summary(tmp_path / "run")["overall"]["sr"] == 1.0 and summary(tmp_path / "run")["setup_restarts"] == 1
    assert "setup restarts: 1" in r.stdout


def test_an_app_that_crashes_at_every_start_is_a_setup_error(tmp_path):
    root = crashing_app(tmp_path, starts_that_crash=5)
    r = mcpworld(root, "run", "--mode", "mcp", "--out", str(tmp_path / "run"))
    trial = next((tmp_path / "run" / "trials").iterdir())
    result = json.loads((trial / "result.json").read_text())
    assert not result["success"] and result["failure"] == "setup_error" and result["setup_attempts"] == 2, r.stderr
    assert sorted(p.name for p in (trial / "setup-attempts").iterdir()) == ["1"]
    assert len(list((tmp_path / "crashes").iterdir())) == 2  # two starts, no more


QUITTER = '''
import asyncio, os, sys
from mcp import Client

async def main():
    async with Client(os.environ["MCPWORLD_GATEWAY_URL"]) as c:
        await c.call_tool("computer", {"action": "key", "text": "ctrl+q"})
        await asyncio.sleep(1)

asyncio.run(main())
'''


def test_an_app_the_agent_quits_is_the_agents_failure(tmp_path):
    """The app quit through its own shortcut (exit status 0) is a person's way to fail, charged to the agent:
    in SR, not among the testbed's failures (an app that dies of a signal is: test_trial, test_resume)."""
    root = tmp_path / "content"
    shutil.copytree(FIXTURE, root)
    for folder in root.parents:
        folder.chmod(folder.stat().st_mode | 0o001)
    quitter = tmp_path / "quitter.py"
    quitter.write_text(QUITTER)
    quitter.chmod(0o755)
    for folder in (tmp_path,):
        folder.chmod(folder.stat().st_mode | 0o005)  # the agent's user runs it
    r = mcpworld(root, "run", "--agent", "command", "--command", f"{sys.executable} {quitter}")
    assert r.returncode == 2 and "{prompt}" in r.stderr and "Traceback" not in r.stderr  # said plainly, nothing run
    r = mcpworld(root, "run", "--mode", "hybrid", "--agent", "command", "--command", f"{sys.executable} {quitter} {{prompt}}",
                 "--out", str(tmp_path / "run"))
    assert r.returncode == 0, r.stderr
    trial = json.loads(next((tmp_path / "run" / "trials").glob("*/result.json")).read_text())
    assert trial["failure"] == "app_closed" and trial["tool_calls"] == 1, trial["failure_detail"]
    s = summary(tmp_path / "run")
    assert s["overall"]["trials"] == 1 and s["overall"]["sr"] == 0.0 and s["testbed_failures"] == {}
