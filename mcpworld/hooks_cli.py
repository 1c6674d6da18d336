"""`mcpworld hooks trace` and `mcpworld hooks check`: the workflow for writing hooks for an app."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

from gateway.modes import Mode
from mcpworld import paths
from mcpworld.agents.base import Agent, AgentContext, AgentError
from mcpworld.config.load import ResolvedTask
from mcpworld.trial import Trial, TrialOptions
from probe_runtime.trace import format_call


class TraceAgent(Agent):
    """Attaches the tracer to the trial's app and prints calls until Ctrl-C or `seconds` pass."""

    name = "trace"

    def __init__(self, pattern: str, module: str, out: Path | None, seconds: float | None, console):
        self.pattern, self.module, self.out, self.seconds, self.console = pattern, module, out, seconds, console
        self.trial: Trial | None = None
        self.calls = 0

    async def run(self, ctx: AgentContext) -> None:
        sink = open(self.out, "a", buffering=1) if self.out else None
        argv = ["--pid", str(self.trial.app_proc.pid), "--pattern", self.pattern, "--module", self.module]
        signatures = paths.HOOKS_DIR / self.trial.rt.app.id / "signatures.json"
        if signatures.is_file():  # parameter types and names for this app's libraries
            argv += ["--signatures", str(signatures)]
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "probe_runtime.trace", *argv,
                                                    stdout=asyncio.subprocess.PIPE, cwd=str(paths.ROOT))
        stop, ready = asyncio.Event(), asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, stop.set)

        async def pump() -> None:
            while line := await proc.stdout.readline():
                msg = json.loads(line)
                if msg["type"] == "ready":
                    ready.set()
                    self.console.print(f"tracing {msg['hooked']} function(s) matching {self.pattern!r} in "
                                       f"{self.module!r} on display {self.trial.env.display}; Ctrl-C to stop",
                                       markup=False, soft_wrap=True)
                elif msg["type"] == "error":
                    raise AgentError(f"trace failed: {msg['error']}")
                else:
                    self.calls += 1
                    self.console.print(format_call(msg), highlight=False, soft_wrap=True)
                    if sink:
                        sink.write(json.dumps({k: v for k, v in msg.items() if k != "type"}) + "\n")
            stop.set()

        reader = asyncio.create_task(pump())
        try:
            # `seconds` of tracing count from the hooks being in place: attaching and loading the script
            # take seconds of their own on a loaded machine (CI once traced 2 s and saw no call)
            hooked, stopped = asyncio.create_task(ready.wait()), asyncio.create_task(stop.wait())
            await asyncio.wait({hooked, stopped, reader}, return_when=asyncio.FIRST_COMPLETED)
            hooked.cancel()
            stopped.cancel()
            if ready.is_set():
                try:
                    await asyncio.wait_for(stop.wait(), self.seconds)
                except asyncio.TimeoutError:
                    pass
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGINT)
                await proc.wait()
            await reader
            if sink:
                sink.close()


async def trace_app(rt: ResolvedTask, pattern: str, module: str, out_file: Path | None, seconds: float | None,
                    trial_dir: Path, console) -> int:
    agent = TraceAgent(pattern, module, out_file, seconds, console)
    trial = Trial(rt, agent, TrialOptions(mode=Mode.GUI, timeout=24 * 3600), trial_dir)
    agent.trial = trial
    result = await trial.run()
    if result.failure == "setup_error":
        raise RuntimeError(result.failure_detail)
    return agent.calls
