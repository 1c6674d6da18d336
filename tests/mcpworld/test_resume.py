"""`mcpworld run --resume`: a run killed midway (the runner and everything it started killed at once) is
finished by resuming it, with every trial recorded exactly once; unfinished trial folders and a torn
results line are set aside, not counted; a resume that asks for another configuration is refused.
Real trials of the fixture app (tests/fixture_app), through the `mcpworld` command."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.mcpworld.test_fixture_app import FIXTURE, crashing_app, mcpworld

MODES = ("gui", "mcp", "hybrid")


def content_tree(tmp_path: Path) -> Path:
    root = tmp_path / "content"
    shutil.copytree(FIXTURE, root)
    for folder in root.parents:  # the app's user runs the app from here, as in test_fixture_app
        folder.chmod(folder.stat().st_mode | 0o001)
    return root


def said(r) -> str:
    return " ".join(r.stderr.split())  # the terminal's wrapping undone


def lines(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("command", ["run", "tasks verify"])
def test_a_terminated_run_stops_as_ctrl_c_does(tmp_path, command):
    """SIGTERM (a job scheduler's, `kill`'s) tears the running trial down and records it as interrupted, as
    Ctrl-C does, and leaves no process of the run behind; by default it ended the runner on the spot, with the
    trial unrecorded and the app running. The same for `tasks verify`, which then records no proof."""
    import psutil

    root = content_tree(tmp_path)
    if command == "run":
        run = tmp_path / "run"
        args = ["run", "--trials", "4", "--mode", "gui", "--out", str(run)]
    else:
        run = None  # the verify's own folder under runs/
        args = ["tasks", "verify", "-t", "counter/1", "--parallel", "2"]
    err = tmp_path / "stderr"
    runner = subprocess.Popen([sys.executable, "-m", "mcpworld.cli", *args], cwd=root, stdout=subprocess.DEVNULL,
                              stderr=err.open("w"), env={**os.environ, "MCPWORLD_ROOT": str(root)},
                              start_new_session=True)
    try:
        deadline, running = time.monotonic() + 300, []
        while time.monotonic() < deadline and runner.poll() is None and not running:
            folders = run and [run] or sorted((root / "runs").glob("*verify*"))
            trials = [f for d in folders if (d / "trials").is_dir() for f in (d / "trials").iterdir()]
            if sum((f / "result.json").exists() for f in trials) >= 1:  # the second trial, under way
                running = [f for f in trials if (f / "events.jsonl").exists() and not (f / "result.json").exists()
                           and (run or not f.name.split("__")[1].endswith(("oracle", "null")))]  # a mutant's
            time.sleep(0.05)
        assert runner.poll() is None and running, "the run ended before it could be terminated"
        started = psutil.Process(runner.pid).children(recursive=True)
        runner.send_signal(signal.SIGTERM)
        runner.wait(120)
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    assert runner.returncode == 130  # as Ctrl-C ends it
    # the waiting trials' cancellation ended the run while the running one still tore down: its end was cut
    # short when the event loop closed
    said = err.read_text()
    assert "Traceback" not in said and "Task was destroyed" not in said, said[-3000:]
    left = [p for p in started if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not left, [p.cmdline() for p in left]
    stopped = json.loads((running[0] / "result.json").read_text())
    assert stopped["failure"] == "interrupted", stopped
    if run:
        assert len(lines(run)) == 1  # the interrupted trial is not a result: --resume runs it again
    else:
        assert not (root / "tasks" / "counter" / "verified.json").exists()  # half a proof is none


def test_a_killed_run_resumes_with_every_trial_exactly_once(tmp_path):
    root, run = content_tree(tmp_path), tmp_path / "run"
    args = [sys.executable, "-m", "mcpworld.cli", "run", "--trials", "2", "--out", str(run)]
    for mode in MODES:
        args += ["--mode", mode]
    runner = subprocess.Popen(args, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env={**os.environ, "MCPWORLD_ROOT": str(root)}, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and runner.poll() is None:
            if (run / "results.jsonl").exists() and len(lines(run)) >= 2:
                break
            time.sleep(0.2)
        assert runner.poll() is None, "the run ended before it could be killed"
        time.sleep(1.0)  # into the next trial
        os.killpg(runner.pid, signal.SIGKILL)
        runner.wait(30)
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    before = lines(run)
    assert 2 <= len(before) < 6
    # the trial the kill cut short has a folder and no result
    unfinished = sorted(f.name for f in (run / "trials").iterdir() if not (f / "result.json").exists())

    r = mcpworld(root, "run", "--resume", str(run))
    assert r.returncode == 0, r.stderr
    assert f"{len(before)} finished trial(s) kept" in said(r)
    after = lines(run)
    assert Counter((x["task"], x["mode"], x["trial"]) for x in after) == Counter(
        ("counter/1", m, k) for m in MODES for k in range(2))
    assert all(x["success"] for x in after)
    kept = {(x["task"], x["mode"], x["trial"]): x["timings"] for x in before}
    assert all(kept[k] == x["timings"] for x in after if (k := (x["task"], x["mode"], x["trial"])) in kept)
    summary = json.loads((run / "summary.json").read_text())
    assert {m: g["sr"] for m, g in summary["per_mode"].items()} == {m: 1.0 for m in MODES}
    meta = json.loads((run / "run.json").read_text())
    assert len(meta["resumed"]) == 1 and meta["modes"] == list(MODES)
    # each is set aside with a note, and nothing else is
    aside = sorted(f.name for f in (run / "set_aside").glob("*")) if (run / "set_aside").exists() else []
    assert len(aside) == len(unfinished) and all(a.startswith(u) for a, u in zip(aside, unfinished)), (aside, unfinished)
    assert all((run / "set_aside" / a / "SET_ASIDE.txt").exists() for a in aside)

    # a torn last line and a trial folder with no result: set aside, nothing run again, nothing counted twice
    with open(run / "results.jsonl", "a") as f:
        f.write('{"task": "counter/1", "mode": "gui", "tri')
    (run / "trials" / "counter-1__gui__7").mkdir()
    (run / "trials" / "counter-1__gui__7" / "events.jsonl").write_text("")
    r = mcpworld(root, "run", "--resume", str(run))
    assert r.returncode == 0 and "6 finished trial(s) kept" in said(r) and "0 to run" in said(r), r.stderr
    assert len(lines(run)) == 6
    assert "did not finish" in (run / "set_aside" / "counter-1__gui__7" / "SET_ASIDE.txt").read_text()

    # a trial that Ctrl-C stopped (its result says interrupted) runs again
    victim = run / "trials" / "counter-1__mcp__1" / "result.json"
    result = json.loads(victim.read_text())
    result["failure"], result["success"] = "interrupted", False
    victim.write_text(json.dumps(result))
    kept_lines = [json.dumps(result) if (x["mode"], x["trial"]) == ("mcp", 1) else json.dumps(x) for x in lines(run)]
    (run / "results.jsonl").write_text("".join(line + "\n" for line in kept_lines))
    r = mcpworld(root, "run", "--resume", str(run))
    assert r.returncode == 0 and "5 finished trial(s) kept" in said(r) and "1 to run" in said(r), r.stderr
    assert len(lines(run)) == 6 and all(x["success"] for x in lines(run))
    notes = [f.read_text() for f in (run / "set_aside").glob("counter-1__mcp__1*/SET_ASIDE.txt")]
    assert any("interrupted" in n for n in notes), notes

    # another configuration is another experiment: refused, naming what differs, and nothing changes
    r = mcpworld(root, "run", "--resume", str(run), "--mode", "gui", "--agent", "null")
    assert r.returncode == 2
    assert "modes" in said(r) and "agent" in said(r), r.stderr
    assert len(lines(run)) == 6


def test_resuming_after_the_task_changed_is_refused(tmp_path):
    root, run = content_tree(tmp_path), tmp_path / "run"
    r = mcpworld(root, "run", "--mode", "mcp", "--out", str(run))
    assert r.returncode == 0, r.stderr
    task = root / "tasks" / "counter" / "1" / "task.json"
    raw = json.loads(task.read_text())
    raw["instruction"] += " Quickly."
    task.write_text(json.dumps(raw))
    r = mcpworld(root, "run", "--resume", str(run))
    assert r.returncode == 2 and "counter/1" in said(r) and "changed" in said(r), r.stderr


def test_a_testbed_failure_stays_out_of_sr_and_reruns_when_asked(tmp_path):
    """An app that crashes at both starts of a trial: a set-up error, the testbed's failure. The report keeps it
    out of SR and names it; a plain resume keeps it; --resume --rerun-testbed sets it aside and runs it again."""
    root, run = crashing_app(tmp_path, starts_that_crash=2), tmp_path / "run"
    r = mcpworld(root, "run", "--mode", "mcp", "--out", str(run))
    assert r.returncode == 0, r.stderr
    assert lines(run)[0]["failure"] == "setup_error"
    s = json.loads((run / "summary.json").read_text())
    assert s["trials"] == 0 and s["per_mode"] == {} and s["testbed_failures"] == {"setup_error": 1}
    assert s["testbed_trials"] == ["counter/1:mcp#0"] and s["trial_rows"][0]["testbed_failure"] is True
    assert s["cost"]["all"]["trials"] == 1  # what it cost is still counted
    # STRICT counts a task that could not be measured as a failure, as it does every task that could not run
    assert s["implemented_strict"]["mcp"]["runnable"] == 0 and s["implemented_strict"]["mcp"]["strict"] == 0.0
    assert "testbed_failure" in s["implemented_strict"]["mcp"]["not_runnable"]["counter/1"]
    out = " ".join(r.stdout.split())  # the terminal's wrapping undone
    assert "testbed failures, in no figure above but the cost: 1 trial(s) (setup_error 1): counter/1:mcp#0" in out
    assert "run them again: mcpworld run --resume" in out and "--rerun-testbed" in out
    assert "1 testbed" in said(r)  # the live progress line

    r = mcpworld(root, "run", "--rerun-testbed")
    assert r.returncode == 2 and "--resume" in said(r)
    r = mcpworld(root, "run", "--resume", str(run))
    assert r.returncode == 0 and "1 finished trial(s) kept" in said(r) and "0 to run" in said(r), r.stderr

    r = mcpworld(root, "run", "--resume", str(run), "--rerun-testbed")
    assert r.returncode == 0, r.stderr
    assert "0 finished trial(s) kept, 0 unfinished and 1 testbed failure(s) set aside" in said(r)
    assert len(lines(run)) == 1 and lines(run)[0]["success"]  # the app's third start did not crash
    s = json.loads((run / "summary.json").read_text())
    assert s["overall"]["sr"] == 1.0 and s["testbed_failures"] == {} and s["testbed_reruns"] == 1
    note = (run / "set_aside" / "counter-1__mcp__0" / "SET_ASIDE.txt").read_text()
    assert "testbed's side (setup_error" in note and "--rerun-testbed" in note


def test_verify_records_each_task_as_it_is_proven_and_none_that_changed_meanwhile(tmp_path):
    """`tasks verify` records a task as soon as its trials and mutants are done, before the next one starts (a
    stopped verify keeps what it finished; it used to queue every task's mutants behind all the trials, so nothing
    was recorded until the end), and never records a task whose content changed after the verify began: the
    record would name content its trials did not run with."""
    root = content_tree(tmp_path)
    first, second = root / "tasks" / "counter" / "1", root / "tasks" / "counter" / "2"
    shutil.copytree(first, second)
    task = json.loads((second / "task.json").read_text())
    (second / "task.json").write_text(json.dumps({**task, "template": 2}))
    records = root / "tasks" / "counter" / "verified.json"
    err = tmp_path / "stderr"
    runner = subprocess.Popen([sys.executable, "-m", "mcpworld.cli", "tasks", "verify", "-t", "counter/1", "-t", "counter/2",
                               "--parallel", "1"], cwd=root, stdout=subprocess.DEVNULL,
                              stderr=err.open("w"), env={**os.environ, "MCPWORLD_ROOT": str(root), "COLUMNS": "200"},
                              start_new_session=True)

    def trials(key: str) -> list[Path]:
        return [f for d in (root / "runs").glob("*verify*") if (d / "trials").is_dir()
                for f in (d / "trials").iterdir() if f.name.startswith(key.replace("/", "-") + "__")]

    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not records.exists():
            time.sleep(0.05)
        assert records.exists() and runner.poll() is None, "the first task was not recorded while the verify ran"
        assert list(json.loads(records.read_text())["tasks"]) == ["counter/1"]
        assert not any((f / "result.json").exists() for f in trials("counter/2"))  # one task at a time
        while time.monotonic() < deadline and not trials("counter/2") and runner.poll() is None:
            time.sleep(0.05)
        assert trials("counter/2") and runner.poll() is None, "the second task ended before it could be changed"
        (second / "task.json").write_text(json.dumps({**task, "template": 2, "notes": "changed while verified"}))
        runner.wait(300)
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    said = " ".join(err.read_text().split())
    assert runner.returncode == 1 and "counter/2: not recorded: its content" in said, said[-2000:]
    assert list(json.loads(records.read_text())["tasks"]) == ["counter/1"]
