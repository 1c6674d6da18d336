"""The command agent: any external agent binary, given the gateway's URL and the instruction.

`--command 'my-agent --task {prompt}'` is split like a shell line; {prompt} fills exactly one argv
slot (never re-split, never through a shell). The binary finds the MCP gateway (streamable HTTP)
at $MCPWORLD_GATEWAY_URL and the mode at $MCPWORLD_MODE.
"""

from __future__ import annotations

import asyncio
import os
import shlex

from gateway.server import HttpGateway
from mcpworld.agents.base import Agent, AgentContext, AgentError, register


@register
class CommandAgent(Agent):
    name = "command"

    def __init__(self, command: str | list[str]):
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not any("{prompt}" in a for a in self.argv):
            raise ValueError("the command agent's argv needs a {prompt} slot")

    async def run(self, ctx: AgentContext) -> None:
        gw = HttpGateway(ctx.tools)
        await gw.start()
        ctx.gateway_url = gw.url
        argv = [a.replace("{prompt}", ctx.instruction) for a in self.argv]
        env = {**os.environ, "MCPWORLD_GATEWAY_URL": gw.url, "MCPWORLD_MODE": ctx.mode}
        proc = None
        try:
            proc = await asyncio.create_subprocess_exec(*argv, env=env, stdout=asyncio.subprocess.PIPE,
                                                        stderr=asyncio.subprocess.STDOUT, start_new_session=True)
            out, _ = await proc.communicate()
            ctx.final_text = out.decode(errors="replace")[-4000:]
            ctx.steps = ctx.tools.log.count
            if proc.returncode != 0:
                raise AgentError(f"{argv[0]} exited with {proc.returncode}: {ctx.final_text[-500:]}")
        finally:
            if proc and proc.returncode is None:
                proc.kill()
                await proc.wait()
            await gw.stop()
