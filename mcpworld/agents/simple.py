"""The null agent (does nothing) and the oracle (replays the task's reference solution)."""

from __future__ import annotations

import asyncio

from evaluator.predicates import compile_where
from mcpworld.agents.base import Agent, AgentContext, AgentError, register
from mcpworld.config.task import OracleStep, Shows
from mcpworld.envs.base import EnvironmentSetupError


def payload_matches(shown: Shows, path: str):
    """A test of a recorded event's payload against `shown`'s where (compiled once)."""
    where = compile_where(shown.where, path)
    return lambda e: where(e.payload)


@register
class NullAgent(Agent):
    name = "null"

    async def run(self, ctx: AgentContext) -> None:
        return None


@register
class OracleAgent(Agent):
    """Replays oracle.mcp (MCP calls) or oracle.gui (computer actions) through the gateway."""

    name = "oracle"
    focus_timeout = 30.0
    shows_timeout = 60.0  # at most this long for the event a step's effect shows in
    draws_timeout = 30.0  # at most this long for what a step opens on the screen
    wait_for_windows = True  # off while recording them (mcpworld.oracle_windows)

    def __init__(self, solution: str | None = None, steps: list | None = None):
        """solution: replay one of the task's near misses or alternatives (by id) instead of its oracle;
        steps: replay these steps (OracleStep, or {"tool", "args"}) instead (a mutant of the oracle)."""
        self.solution = solution
        self.steps = None if steps is None else [s if isinstance(s, OracleStep) else OracleStep(**s) for s in steps]

    async def run(self, ctx: AgentContext) -> None:
        if self.steps is not None:
            steps = self.steps
        elif self.solution:
            try:
                steps = ctx.task.task.solution(self.solution).steps
            except KeyError:
                raise AgentError(f"task {ctx.task.key} has no near miss or alternative '{self.solution}'") from None
        else:
            steps = ctx.task.task.oracle_for(ctx.mode)
        if steps is None:
            raise AgentError(f"task {ctx.task.key} has no reference solution for mode '{ctx.mode}'")
        available = {s.name for s in ctx.tools.specs()}
        began = len(ctx.events.log.events) if ctx.events is not None else 0
        for i, step in enumerate(steps):
            if step.unless and self.reported(ctx, step.unless, began):
                continue
            if step.tool not in available:
                raise AgentError(f"oracle step {i} needs tool '{step.tool}', not offered in mode '{ctx.mode}'"
                                 f"{' with --no-bash' if ctx.no_bash else ''}")
            since = len(ctx.events.log.events) if ctx.events is not None else 0
            watch = ctx.env.drawing() if step.draw_share and ctx.env is not None else None
            drawn_from = watch.mark() if watch is not None else None
            result = await ctx.tools.call(step.tool, ctx.values.expand_tree(step.args))
            ctx.steps += step.is_action  # counted as the human steps are: waits are not steps
            if result.is_error:
                raise AgentError(f"oracle step {i} ({step.tool}) failed: {result.summary()}")
            await self.after_step(ctx, i, step)
            if watch is not None:  # what the step opened is on the screen before the next step types into it
                await watch.settled(drawn_from, first=self.draws_timeout, quiet=0.3, timeout=self.draws_timeout,
                                    min_share=step.draw_share)
            if step.shows and ctx.events is not None:
                await self.watch(ctx, step, since)
            if step.window and self.wait_for_windows and ctx.env is not None:
                try:
                    await ctx.env.wait_window(ctx.values.expand(step.window), self.focus_timeout)
                except EnvironmentSetupError as e:
                    raise AgentError(f"oracle step {i}: {e}") from None

    @staticmethod
    def reported(ctx: AgentContext, shown: Shows, since: int) -> bool:
        """Whether the app reported `shown`'s event (matching its `where`) from the `since`-th event on."""
        return ctx.events is not None and ctx.events.recorded_event(
            shown.event, where=payload_matches(shown, "unless.where"), since=since) is not None

    async def watch(self, ctx: AgentContext, step: OracleStep, since: int) -> None:
        """Until the app reports the event that shows the step's effect (from the step's start on), or the
        time is up: what a person does looking at the screen before the next step. Either way it goes on."""
        shown = payload_matches(step.shows, "shows.where")
        try:
            await asyncio.wait_for(ctx.events.wait_event(step.shows.event, where=shown, since=since),
                                   self.shows_timeout)
        except asyncio.TimeoutError:
            pass

    async def after_step(self, ctx: AgentContext, index: int, step) -> None:
        """Called once each step is done; a subclass may look at the screen (see mcpworld.oracle_windows)."""
