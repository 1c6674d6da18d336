"""An outside agent for the command-agent test: a plain MCP client of the gateway's HTTP URL.

argv: the instruction (one argument, spaces and quotes intact). It creates the deck the
instruction names, using only what the gateway lists.
"""

import asyncio
import os
import re
import sys

from mcp import Client


async def main(prompt: str) -> None:
    deck = re.search(r"named (.+)\.$", prompt).group(1)
    async with Client(os.environ["MCPWORLD_GATEWAY_URL"]) as c:
        names = [t.name for t in (await c.list_tools()).tools]
        print("tools:", ",".join(sorted(names)))
        r = await c.call_tool("anki__create_deck", {"name": deck})
        print("result:", r.content[0].text, r.is_error)


asyncio.run(main(sys.argv[1]))
