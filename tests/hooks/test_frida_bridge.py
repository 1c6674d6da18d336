"""The Frida bridge on a real process: hook events, script errors and the target's death all
reach the evaluator as authenticated `frida` events."""

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from evaluator.server import Evaluator

HERE = Path(__file__).parent
TARGET = "import os, time\nfor _ in range(400):\n    os.getppid(); time.sleep(0.05)\n"


async def run_bridge(tmp_path, scripts, target_code=TARGET, until=None, timeout=30):
    e = Evaluator("r1", "testapp", tmp_path / "events.jsonl")
    await e.start()
    target = subprocess.Popen([sys.executable, "-c", target_code])
    cfg = tmp_path / "run.json"
    cfg.write_text(json.dumps({"url": e.url, "token": e.credential("frida"), "run_id": "r1", "app": "testapp"}))
    bridge = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "probe_runtime.frida_bridge", "--pid", str(target.pid),
        *[a for s in scripts for a in ("--script", str(HERE / s))],
        env={"MCPWORLD_PROBE_CONFIG": str(cfg), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(HERE.parent.parent)})
    try:
        for _ in range(int(timeout / 0.05)):
            if until(e):
                break
            await asyncio.sleep(0.05)
    finally:
        target.kill()
        target.wait()
        try:
            await asyncio.wait_for(bridge.wait(), 15)
        finally:
            if bridge.returncode is None:
                bridge.kill()
        await e.stop()
    assert not cfg.exists()  # the secret file was consumed
    return [x for x in e.log.events if x.source == "frida"]


def names(events):
    return [x.name for x in events]


async def test_hook_events_reach_the_evaluator(tmp_path):
    events = await run_bridge(tmp_path, ["getppid_hook.js"], until=lambda e: sum(x.name == "getppid_called" for x in e.log.events) >= 5)
    calls = [x for x in events if x.name == "getppid_called"]
    assert names(events)[0] == "frida_attached"
    assert [c.payload["n"] for c in calls[:5]] == [1, 2, 3, 4, 5]
    assert calls[0].payload["script"] == "getppid_hook.js" and calls[0].payload["ppid"] > 0
    assert [c.seq for c in events] == list(range(len(events)))
    assert names(events)[-1] == "frida_detached"  # the target was killed: said, not silent


async def test_script_errors_are_events(tmp_path):
    events = await run_bridge(tmp_path, ["broken_hook.js", "getppid_hook.js"],
                              until=lambda e: any(x.name == "getppid_called" for x in e.log.events))
    missing = [x for x in events if x.name == "hook_missing"]
    assert missing and missing[0].payload["function"] == "no_such_function_anywhere"
    errors = [x for x in events if x.name == "hook_error"]
    assert errors and "broken on purpose" in errors[0].payload["description"]
    assert "getppid_called" in names(events)  # one broken script does not stop the others
