"""A sloppy outside agent for the fixture app: it adds the item with an extra "s" (MCP client of the gateway
at $MCPWORLD_GATEWAY_URL). The task must fail it."""

import asyncio
import os
import re
import sys

from mcp import Client


async def main(prompt: str) -> None:
    item = re.search(r'named "(.+)"', prompt).group(1)
    async with Client(os.environ["MCPWORLD_GATEWAY_URL"]) as c:
        await c.call_tool("counter__add_item", {"name": item + "s"})


asyncio.run(main(sys.argv[1]))
