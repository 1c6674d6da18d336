"""Trial lifecycle under failure: crashed or slow agents, crashed or restarted apps, forged events,
the probe's secret, a killed runner, and twenty trials in a row leaving nothing behind."""

import asyncio
import glob
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from evaluator.log import EventLog
from mcpworld import paths
from mcpworld.agents import make_agent
from mcpworld.agents.base import Agent
from mcpworld.config.load import load_tasks
from mcpworld.envs.local import MARKER, PREFIX
from mcpworld.results import TrialResult, failed_on_testbed
from mcpworld.trial import Trial, TrialOptions

TASKS = load_tasks()
T161 = TASKS["anki/161"]
ADD_161 = {"fields": {"Front": "What is the largest planet?", "Back": "Jupiter"}, "deck": "Default"}


class Scripted(Agent):
    """An agent whose behaviour is a coroutine function of (ctx, trial)."""

    name = "scripted"

    def __init__(self, script):
        self.script, self.trial = script, None

    async def run(self, ctx):
        await self.script(ctx, self.trial)


async def run_trial(tmp_path, script, mode="hybrid", task=T161, **opts):
    agent = Scripted(script)
    trial = Trial(task, agent, TrialOptions(mode=mode, **opts), tmp_path / "trial")
    agent.trial = trial
    return trial, await trial.run()


def structured(r):
    """A tool result's structured value (a list comes wrapped as {"result": [...]}); it must not be an error."""
    assert not r.is_error, r.texts
    s = r.structured or {}
    return s.get("result", s)


def probe_config(trial) -> str:
    """Where the trial's in-app probe source wrote the one-time run config."""
    return next(s for s in trial.sources if s.key == "probe").config_path


def marked_processes():
    out = []
    for p in psutil.process_iter(["pid"]):
        try:
            if MARKER in p.environ():
                out.append(p)
        except psutil.Error:
            continue
    return out


def x_displays():
    return set(glob.glob("/tmp/.X*-lock")) | set(glob.glob("/tmp/.X11-unix/X*"))


def env_dirs():
    return set(glob.glob(f"/tmp/{PREFIX}*"))


async def test_agent_crash_after_the_work_still_counts(tmp_path):
    async def script(ctx, trial):
        await ctx.tools.call("anki__add_note", ADD_161)
        raise RuntimeError("boom")
    _, r = await run_trial(tmp_path, script)
    assert r.success and r.kscr == 1.0
    assert "boom" in r.failure_detail


async def test_agent_timeout_is_recorded_and_the_state_still_evaluated(tmp_path):
    async def slow_after_work(ctx, trial):
        await ctx.tools.call("anki__add_note", ADD_161)
        await asyncio.sleep(3600)
    _, r = await run_trial(tmp_path, slow_after_work, timeout=3)
    # cut at its timeout (not before it, and not waited out), recorded, and the work done before still counts
    assert r.success and r.agent_failure == "exec_timeout" and 2.9 <= r.timings.agent_s < 3600, r

    async def idle(ctx, trial):
        await asyncio.sleep(3600)
    _, r = await run_trial(tmp_path / "2", idle, timeout=2)
    assert not r.success and r.failure == "exec_timeout"


async def test_app_killed_mid_trial_state_read_from_file(tmp_path):
    async def kill_app(ctx, trial):
        await ctx.tools.call("anki__add_note", ADD_161)
        os.kill(trial.app_proc.pid, signal.SIGKILL)
        await asyncio.sleep(1)
    _, r = await run_trial(tmp_path, kill_app)
    events = EventLog.read(tmp_path / "trial" / "events.jsonl")
    state = [e for e in events if e.source == "query"]
    assert state and state[-1].payload["read_from"] == "file"  # state[0] is the start state, read before the agent
    assert r.success, r.failure_detail  # the note was committed before the crash

    async def kill_only(ctx, trial):
        os.kill(trial.app_proc.pid, signal.SIGKILL)
        await asyncio.sleep(1)
    _, r = await run_trial(tmp_path / "2", kill_only)
    assert not r.success and r.failure == "app_crash" and failed_on_testbed(r)  # a signal: the testbed's, not the agent's


def oom_in_a_memory_cgroup(tmp_path) -> int:
    """A process over its memory cgroup's limit, killed by the kernel's OOM killer as on a machine out of memory;
    its exit status."""
    name = f"mcpworld-test-{os.getpid()}"
    v1, v2 = Path("/sys/fs/cgroup/memory") / name, Path("/sys/fs/cgroup") / name
    group, limit = (v1, "memory.limit_in_bytes") if Path("/sys/fs/cgroup/memory").is_dir() else (v2, "memory.max")
    group.mkdir()
    try:
        (group / limit).write_text(str(64 << 20))
        hog = subprocess.run(["sh", "-c", f'echo $$ > {group}/cgroup.procs; exec "$0" -c "b = bytearray(400 << 20)"',
                              sys.executable])
        return hog.returncode
    finally:
        group.rmdir()


async def test_a_machine_out_of_memory_is_the_testbeds_failure(tmp_path):
    """The kernel killed a process for want of memory while the trial ran: its failure says nothing of the
    agent (out_of_memory, the trial's own failure kept in the detail); a verified success stays one."""
    async def idle_through_an_oom(ctx, trial):
        assert await asyncio.to_thread(oom_in_a_memory_cgroup, tmp_path) == -signal.SIGKILL
    _, r = await run_trial(tmp_path, idle_through_an_oom)
    assert r.failure == "out_of_memory" and failed_on_testbed(r), (r.failure, r.failure_detail)
    assert "killed 1 process(es) for want of memory" in r.failure_detail and "evaluated_failed" in r.failure_detail

    async def work_through_an_oom(ctx, trial):
        await ctx.tools.call("anki__add_note", ADD_161)
        assert await asyncio.to_thread(oom_in_a_memory_cgroup, tmp_path) == -signal.SIGKILL
    _, r = await run_trial(tmp_path / "2", work_through_an_oom)
    assert r.success and r.failure is None, r.failure_detail


@pytest.mark.parametrize("key", ["anki/161", "blender/185", "freecad/137", "qgis/61"])
async def test_a_probe_that_cannot_start_ends_the_set_up_at_once_with_its_error(key, tmp_path, monkeypatch):
    """The app's bridge port taken before the app binds it: its probe connects, then fails to serve. The
    set-up ends on the probe's own report, naming the cause, not after the app's 90 s ready timeout."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        monkeypatch.setattr("mcpworld.trial.free_port", lambda: taken.getsockname()[1])

        async def nothing(ctx, trial):
            pass
        _, r = await run_trial(tmp_path, nothing, task=TASKS[key])
    assert r.failure == "setup_error", r.failure_detail
    assert "probe could not start" in r.failure_detail and "Address already in use" in r.failure_detail


async def test_secret_is_gone_before_the_agent_starts(tmp_path, issued_credentials):
    seen, issued = {}, issued_credentials

    async def snoop(ctx, trial):
        r = await ctx.tools.call("bash", {"command": "env; ls -la $HOME; cat $MCPWORLD_PROBE_CONFIG 2>&1; "
                                                    f"cat {probe_config(trial)} 2>&1; echo done"})
        seen["out"] = r.texts[0]
    await run_trial(tmp_path, snoop)
    assert "done" in seen["out"] and "No such file" in seen["out"]
    assert issued and not any(token in seen["out"] for token in issued)


async def test_the_agents_shell_cannot_reach_the_evaluator(tmp_path):
    """Its sandbox has a loopback of its own: a forged hello never arrives (refusing one that does is the
    evaluator's tests', and the container attack test's)."""
    seen = {}

    async def forger(ctx, trial):
        r = await ctx.tools.call("bash", {"command": "python3 -c \"import socket; socket.create_connection("
                                                     f"('127.0.0.1', {trial.evaluator.port}), 3)\" 2>&1 | tail -1"})
        seen["out"] = r.texts[0]
    _, r = await run_trial(tmp_path, forger)
    assert "refused" in seen["out"].lower()
    assert not r.success and r.failure == "evaluated_failed" and r.forgeries == 0
    assert not r.verdict.key_steps[0].reached


async def test_restarted_app_authenticates_again(tmp_path):
    async def restart(ctx, trial):
        proc = psutil.Process(trial.app_proc.pid)
        cmd, env = proc.cmdline(), proc.environ()
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(30)
        await trial.evaluator.wait_event("probe_disconnected")
        before = len(trial.evaluator.connected_streams)
        # the agent starts Anki again the way it was started; the runner re-armed the run config
        await trial.env.spawn(cmd, env=env, log_name="app-restarted")
        for _ in range(600):
            if len(trial.evaluator.connected_streams) > before:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(1)
        for _ in range(40):
            r = await ctx.tools.call("anki__add_note", ADD_161)
            if not r.is_error:
                break
            await asyncio.sleep(0.5)
    _, r = await run_trial(tmp_path, restart, mode="mcp")
    assert r.success, r.failure_detail
    events = EventLog.read(tmp_path / "trial" / "events.jsonl")
    streams = {e.stream for e in events if e.source == "probe"}
    assert len(streams) == 2  # two app processes, both authenticated
    assert r.forgeries == 0


def test_twenty_trials_leave_no_process_display_or_folder(tmp_path):
    before = (x_displays(), env_dirs())
    assert not marked_processes()
    task = TASKS["anki/164"]
    for i in range(20):
        r = asyncio.run(Trial(task, make_agent("null"), TrialOptions(mode="mcp"), tmp_path / str(i)).run())
        assert r.failure == "evaluated_failed", r.failure_detail
    time.sleep(0.5)
    assert not marked_processes()
    assert x_displays() == before[0]
    assert env_dirs() == before[1]


def test_killed_runner_keeps_its_events_and_leaves_no_desktop(tmp_path):
    out = tmp_path / "run"
    runner = subprocess.Popen([sys.executable, "-m", "mcpworld.cli", "run", "--task", "anki/170", "--mode", "gui",
                               "--agent", "oracle", "--out", str(out)], cwd=paths.ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    events_file = None
    deadline = time.time() + 120
    while time.time() < deadline:
        files = glob.glob(str(out / "trials" / "*" / "events.jsonl"))
        if files and any(e.name == "note_added" for e in EventLog.read(__import__("pathlib").Path(files[0]))):
            events_file = files[0]
            break
        time.sleep(0.2)
    assert events_file, "the oracle never added its note"
    runner.kill()
    runner.wait()
    events = EventLog.read(__import__("pathlib").Path(events_file))
    assert [e.name for e in events if e.source == "probe"][:3] == ["collection_loaded", "ui_ready", "note_added"]
    for _ in range(100):
        if not marked_processes():
            break
        time.sleep(0.1)
    assert not marked_processes(), [p.cmdline() for p in marked_processes()]


@pytest.mark.parametrize("when", ["starting", "acting"])
async def test_a_stopped_trial_tears_down_and_keeps_its_result(tmp_path, when):
    """A caller's time limit (or Ctrl-C) cancels Trial.run while the app starts or the agent acts: the trial
    still tears down (no app, display or folder left), its result says `interrupted` and keeps the events
    already recorded, and the cancellation goes on up."""
    before = (x_displays(), env_dirs())
    acting = asyncio.Event()

    async def add_then_wait(ctx, trial):
        await ctx.tools.call("anki__add_note", ADD_161)
        acting.set()
        await asyncio.sleep(3600)
    agent = Scripted(add_then_wait)
    trial = agent.trial = Trial(T161, agent, TrialOptions(mode="hybrid"), tmp_path / "trial")
    running = asyncio.create_task(trial.run())
    if when == "acting":
        await asyncio.wait_for(acting.wait(), 120)
    else:
        await asyncio.sleep(1.5)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    result = trial.dir.load_result()
    assert result.failure == "interrupted" and not result.success
    names = [e.name for e in EventLog.read(trial.dir.events)]
    assert ("note_added" in names) == (when == "acting")
    assert not marked_processes(), [p.cmdline() for p in marked_processes()]
    assert x_displays() <= before[0] and env_dirs() <= before[1]  # (a fixture's may have closed meanwhile)
    assert {t for t in asyncio.all_tasks() if t is not asyncio.current_task()} == set()


def test_ctrl_c_stops_a_run_cleanly(tmp_path):
    """SIGINT to `mcpworld run`: every running trial tears down and writes its result; the run exits."""
    out = tmp_path / "run"
    runner = subprocess.Popen([sys.executable, "-m", "mcpworld.cli", "run", "--task", "anki/170", "--mode", "gui",
                               "--agent", "oracle", "--out", str(out)], cwd=paths.ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not glob.glob(str(out / "trials" / "*" / "tool_calls.jsonl")):
        time.sleep(0.2)
    runner.send_signal(signal.SIGINT)
    output = runner.communicate(timeout=120)[0]
    assert runner.returncode != 0
    results = glob.glob(str(out / "trials" / "*" / "result.json"))
    assert len(results) == 1, output
    assert TrialResult.model_validate_json(open(results[0]).read()).failure == "interrupted"
    assert "Traceback" not in output, output
    assert not marked_processes(), [p.cmdline() for p in marked_processes()]
