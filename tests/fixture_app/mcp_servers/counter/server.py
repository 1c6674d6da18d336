"""The Counter's MCP server: its tools talk to the running app's control port (COUNTER_URL host:port)."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations


class Control:
    def __init__(self, address: str):
        host, _, port = address.rpartition(":")
        self.address = (host, int(port))

    def request(self, op: str, **params: Any) -> dict[str, Any]:
        try:
            with socket.create_connection(self.address, timeout=10) as s:
                s.sendall(json.dumps({"op": op, **params}).encode() + b"\n")
                reply = json.loads(s.makefile().readline())
        except OSError as e:
            raise ToolError(f"the Counter is not reachable ({e})") from None
        if "error" in reply:
            raise ToolError(reply["error"])
        return reply["result"]


@asynccontextmanager
async def lifespan(server: MCPServer) -> AsyncIterator[Control]:
    yield Control(os.environ["COUNTER_URL"])


mcp = MCPServer("counter", lifespan=lifespan, instructions="Tools for the running Counter app: its list of items.")


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False,
                                      openWorldHint=False), structured_output=True)
def add_item(ctx: Context, name: str) -> dict[str, Any]:
    """Add an item to the list."""
    return ctx.request_context.lifespan_context.request("add", name=name)


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False), structured_output=True)
def list_items(ctx: Context) -> dict[str, Any]:
    """The list's title and its items."""
    return ctx.request_context.lifespan_context.request("state")


if __name__ == "__main__":
    mcp.run("stdio")
