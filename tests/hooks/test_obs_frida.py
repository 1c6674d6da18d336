"""The Frida bridge inside real OBS trials: hook failures stop the trial before the agent, a crash is
reported and the state is read from OBS's files, set-up milestones never count, and the trace tool
decodes libobs arguments from the signatures file."""

import asyncio
import json
import signal
import sys

import pytest

from mcpworld import paths
from mcpworld.agents import make_agent
from mcpworld.agents.base import Agent
from mcpworld.config.load import load_apps, load_task
from mcpworld.trial import Trial, TrialOptions

APPS = load_apps()
T75 = json.loads((paths.TASKS_DIR / "obs" / "75" / "task.json").read_text())


class Scripted(Agent):
    name = "scripted"

    def __init__(self, script):
        self.script, self.trial = script, None

    async def run(self, ctx):
        await self.script(ctx, self.trial)


def variant(tmp_path, name, changes: dict, files: dict | None = None):
    folder = tmp_path / "tasks" / "obs" / name
    folder.mkdir(parents=True)
    # a variant is its own task: it keeps none of task 75's near misses or paper reference
    base = {k: v for k, v in T75.items() if k not in ("near_misses", "alternatives", "paper_key_steps", "notes")}
    (folder / "task.json").write_text(json.dumps({**base, **changes}))
    for fname, text in (files or {}).items():
        (folder / fname).write_text(text)
    return load_task(folder / "task.json", APPS)


# the bridge runs next to OBS: on the host, or inside the container as root
BACKENDS = pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])


async def run(rt, agent, tmp_path, mode="mcp", backend="local"):
    trial = Trial(rt, agent, TrialOptions(mode=mode, backend=backend), tmp_path / "trial")
    if isinstance(agent, Scripted):
        agent.trial = trial
    return await trial.run()


def events(tmp_path):
    return [json.loads(line) for line in (tmp_path / "trial" / "events.jsonl").read_text().splitlines()]


@BACKENDS
async def test_script_error_in_a_task_hook_stops_the_trial_before_the_agent(tmp_path, backend):
    rt = variant(tmp_path, "broken", {"frida_scripts": ["broken.js"]},
                 {"broken.js": "mcpworld.hook('obs_scene_create', {onEnter(a) { this.x = ; }}, 'libobs.so.29');"})
    ran = []

    async def script(ctx, trial):
        ran.append(True)

    result = await run(rt, Scripted(script), tmp_path, backend=backend)
    assert result.failure == "setup_error"
    assert "hook_error" in result.failure_detail and "broken.js" in result.failure_detail
    assert not ran, "the agent must not start when a hook failed to load"
    assert any(e["name"] == "hook_error" and e["source"] == "frida" for e in events(tmp_path))


@BACKENDS
async def test_missing_export_is_reported(tmp_path, backend):
    rt = variant(tmp_path, "missing", {"frida_scripts": ["missing.js"]},
                 {"missing.js": "mcpworld.hook('obs_no_such_function', {onEnter(a) {}}, 'libobs.so.29');"})
    result = await run(rt, make_agent("null"), tmp_path, backend=backend)
    assert result.failure == "setup_error"
    missing = [e for e in events(tmp_path) if e["name"] == "hook_missing"]
    assert missing and missing[0]["payload"]["function"] == "obs_no_such_function"


@BACKENDS
async def test_obs_killed_after_the_work_is_reported_and_state_read_from_files(tmp_path, backend):
    rt = variant(tmp_path, "crash", {})

    async def create_then_kill(ctx, trial):
        res = await ctx.tools.call("obs__create_scene", {"name": "Interview"})
        assert not res.is_error, res.summary()
        await asyncio.sleep(0.5)  # OBS saves the scene collection after each change
        trial.app_proc.kill()
        await trial.app_proc.wait()
        await asyncio.sleep(1.0)

    result = await run(rt, Scripted(create_then_kill), tmp_path, backend=backend)
    evs = events(tmp_path)
    detached = [e for e in evs if e["name"] == "frida_detached"]
    assert detached and detached[0]["payload"]["reason"] in ("process-terminated", "connection-terminated")
    state = [e for e in evs if e["name"] == "state"][-1]["payload"]  # the first is the start state
    assert state["read_from"] == "files" and "Interview" in [s["name"] for s in state["scenes"]]
    # the work was reported before the crash and is kept; OBS's files hold less than obs-websocket tells (and
    # `running` turns false), so the verdict is no, and the crash is the app's, not the agent's
    assert result.kscr == 1.0 and not result.success and result.failure == "app_crash", result.failure_detail


async def test_milestones_of_the_set_up_never_count(tmp_path):
    # "start recording" whose set-up already starts the recording: only the agent's own start may count
    rt = variant(tmp_path, "setup", {
        "instruction": "Please start recording", "params": {}, "human_steps": 1, "modes": ["mcp"],
        "setup": [{"tool": "obs__start_recording", "args": {}}], "setup_events": ["recording_started"],
        "key_steps": [{"id": "recording_started", "event": "recording_started"}],
        "success": {"key_steps": "all"}, "oracle": {"mcp": [{"tool": "obs__get_recording_status", "args": {}}]}})
    result = await run(rt, make_agent("oracle"), tmp_path)
    assert any(e["name"] == "recording_started" for e in events(tmp_path)), "the set-up did start a recording"
    assert not result.success and result.failure == "evaluated_failed"


async def test_trace_decodes_libobs_arguments(tmp_path):
    rt = variant(tmp_path, "trace", {"success": {"expect": {"scenes": {"add": {"name": "Talk"}}}}})
    lines = []

    async def trace(ctx, trial):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "probe_runtime.trace", "--pid", str(trial.app_proc.pid),
            "--pattern", "obs_scene_create,obs_source_set_name", "--module", "libobs*",
            "--signatures", str(paths.HOOKS_DIR / "obs" / "signatures.json"),
            stdout=asyncio.subprocess.PIPE, cwd=str(paths.ROOT))
        try:
            ready = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
            assert ready["type"] == "ready" and ready["hooked"] == 2, ready
            await ctx.tools.call("obs__create_scene", {"name": "Interview"})
            await ctx.tools.call("obs__rename_scene", {"name": "Interview", "new_name": "Talk"})
            for _ in range(2):
                lines.append(json.loads(await asyncio.wait_for(proc.stdout.readline(), 30)))
        finally:
            proc.send_signal(signal.SIGINT)
            await proc.wait()

    result = await run(rt, Scripted(trace), tmp_path)
    assert result.failure is None, result.failure_detail
    assert [(c["function"], c["args"]) for c in lines] == [
        ("obs_scene_create", ['name="Interview"']),
        ("obs_source_set_name", ['source="Interview"', 'name="Talk"'])]
