"""The null agent (does nothing) and the oracle (replays the task's reference solution)."""

from __future__ import annotations

from mcpworld.agents.base import Agent, AgentContext, AgentError, register
from mcpworld.config.templating import expand_tree


@register
class NullAgent(Agent):
    name = "null"

    async def run(self, ctx: AgentContext) -> None:
        return None


@register
class OracleAgent(Agent):
    """Replays oracle.mcp (MCP calls) or oracle.gui (computer actions) through the gateway."""

    name = "oracle"

    async def run(self, ctx: AgentContext) -> None:
        steps = ctx.task.task.oracle_for(ctx.mode)
        if steps is None:
            raise AgentError(f"task {ctx.task.key} has no reference solution for mode '{ctx.mode}'")
        available = {s.name for s in ctx.tools.specs()}
        for i, step in enumerate(steps):
            if step.tool not in available:
                raise AgentError(f"oracle step {i} needs tool '{step.tool}', not offered in mode '{ctx.mode}'"
                                 f"{' with --no-bash' if ctx.no_bash else ''}")
            result = await ctx.tools.call(step.tool, expand_tree(step.args, ctx.values))
            ctx.steps += 1
            if result.is_error:
                raise AgentError(f"oracle step {i} ({step.tool}) failed: {result.summary()}")
