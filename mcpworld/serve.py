"""`mcpworld gateway`: a trial whose agent is whatever MCP client connects to the served tool list."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from gateway.server import HttpGateway, serve_stdio
from mcpworld.agents.base import Agent, AgentContext
from mcpworld.config.load import ResolvedTask
from mcpworld.envs import LOCAL
from mcpworld.results import TrialResult
from mcpworld.trial import Trial, TrialOptions


class ServedAgent(Agent):
    """Serves the trial's tools until the stdio client leaves or the HTTP server is interrupted."""

    name = "external"

    def __init__(self, transport: str, port: int, console):
        self.transport, self.port, self.console = transport, port, console

    async def run(self, ctx: AgentContext) -> None:
        self.console.print(f"task: {ctx.instruction}")
        if self.transport == "stdio":
            await serve_stdio(ctx.tools)
        else:
            gw = HttpGateway(ctx.tools, self.port)
            await gw.start()
            self.console.print(f"MCP gateway at {gw.url} ({len(ctx.tools.specs())} tools); Ctrl-C to finish")
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            loop.add_signal_handler(signal.SIGINT, stop.set)
            loop.add_signal_handler(signal.SIGTERM, stop.set)
            try:
                await stop.wait()
            finally:
                await gw.stop()
        ctx.steps = ctx.tools.log.count


async def serve_task(rt: ResolvedTask, mode: str, no_bash: bool, transport: str, port: int, out: Path,
                     console, backend: str = LOCAL) -> TrialResult:
    opts = TrialOptions(mode=mode, no_bash=no_bash, timeout=24 * 3600, backend=backend,
                        on_view=lambda url: console.print(f"live view: {url}"))
    return await Trial(rt, ServedAgent(transport, port, console), opts, out).run()
