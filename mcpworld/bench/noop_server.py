"""A no-op MCP server (one tool that returns at once), over stdio or streamable HTTP: what one MCP hop
costs in the SDK alone, the floor under any gateway hop. `python -m mcpworld.bench.noop_server stdio|PORT`"""

from __future__ import annotations

import asyncio
import sys

import mcp.types as types
from mcp.server import Server


def build() -> Server:
    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="noop", input_schema={"type": "object"})])

    async def call_tool(ctx, params) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text="ok")])

    return Server("noop", on_list_tools=list_tools, on_call_tool=call_tool)


async def main(where: str) -> None:
    server = build()
    if where == "stdio":
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    else:
        import uvicorn

        app = server.streamable_http_app(streamable_http_path="/mcp")
        await uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=int(where), log_level="warning")).serve()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
