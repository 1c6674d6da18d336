"""Agents that drive an app hard for a benchmark, inside a real trial (environment, app, hooks, gateway)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from mcpworld.agents.base import Agent, AgentContext, AgentError


class CallLoopAgent(Agent):
    """Calls one tool n times (arguments from args(i)), `pause` seconds apart: every call makes the app
    fire a milestone."""

    name = "bench-loop"

    def __init__(self, tool: str, args: Callable[[int], dict[str, Any]], n: int, pause: float = 0.0):
        self.tool, self.args, self.n, self.pause = tool, args, n, pause
        self.dropped: list[str] = []  # calls the app dropped without a reply, made once more

    async def run(self, ctx: AgentContext) -> None:
        for i in range(self.n):
            r = await ctx.tools.call(self.tool, self.args(i))
            if r.is_error and "not reachable" in r.summary() and len(self.dropped) < 3:
                # the app closed the connection without a reply (Blender's bridge, rarely): once more, counted
                self.dropped.append(f"call {i}: {r.summary()[:120]}")
                await asyncio.sleep(0.5)
                r = await ctx.tools.call(self.tool, self.args(i))
            if r.is_error:
                raise AgentError(f"{self.tool} failed on call {i}: {r.summary()}")
            ctx.steps += 1
            if self.pause:
                await asyncio.sleep(self.pause)


class ProbeAgent(Agent):
    """Runs a measuring coroutine with the trial's context (tools, environment) and keeps its result."""

    name = "bench-probe"

    def __init__(self, measure: Callable[[AgentContext], Awaitable[Any]]):
        self.measure = measure
        self.result: Any = None

    async def run(self, ctx: AgentContext) -> None:
        self.result = await self.measure(ctx)
