"""The client of an in-app probe's bridge: one JSON request per tool call over loopback HTTP, with the
run's secret. A bridge error, or an app that does not answer, is a ToolError (an `isError` result)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError


class Bridge:
    def __init__(self, url: str, token: str, app: str, timeout: float = 40.0):
        self.url, self.token, self.app, self.timeout = url, token, app, timeout

    def call(self, method: str, params: dict[str, Any]) -> Any:
        body = json.dumps({"method": method, "params": {k: v for k, v in params.items() if v is not None}}).encode()
        req = urllib.request.Request(self.url, data=body, headers={"Content-Type": "application/json",
                                                                   "Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                reply = json.loads(resp.read())
        except urllib.error.HTTPError as e:
            try:
                reply = json.loads(e.read())
            except ValueError:
                raise ToolError(f"{self.app}'s bridge answered HTTP {e.code}") from None
        except (urllib.error.URLError, OSError) as e:
            raise ToolError(f"{self.app} is not reachable ({e}); is it running?") from None
        if "error" in reply:
            raise ToolError(reply["error"])
        return reply.get("result")


def bridged_server(name: str, app: str, url_env: str, token_env: str, instructions: str, timeout: float = 70.0):
    """An MCP server whose tools are calls to an in-app bridge: the server, the `tool(annotations)` decorator
    its tools use (structured results), and `call(ctx, method, **params)` for a tool's body. The bridge's
    address and secret come from the environment the app's config gives the server."""
    import os
    from collections.abc import AsyncIterator
    from contextlib import asynccontextmanager

    from mcp.server.mcpserver import Context, MCPServer

    @asynccontextmanager
    async def lifespan(server: MCPServer) -> AsyncIterator[Bridge]:
        yield Bridge(os.environ.get(url_env, ""), os.environ.get(token_env, ""), app, timeout=timeout)

    mcp = MCPServer(name, lifespan=lifespan, instructions=instructions)

    def tool(annotations):
        return mcp.tool(annotations=annotations, structured_output=True)

    def call(ctx: Context, method: str, **params: Any) -> Any:
        return ctx.request_context.lifespan_context.call(method, params)

    return mcp, tool, call
