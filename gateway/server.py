"""Serve a ToolRegistry as an MCP server (stdio or streamable HTTP), so any MCP client can be the agent."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp.types as types
import uvicorn
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from gateway.base import image_data
from gateway.net import free_port
from gateway.registry import ToolRegistry


def build_server(registry: ToolRegistry, name: str = "mcpworld-gateway") -> Server:
    schemas: dict[str, dict[str, Any]] = {s.name: s.input_schema for s in registry.specs()}
    tools = [types.Tool(name=s.name, description=s.description, input_schema=s.input_schema,
                        output_schema=s.output_schema,
                        annotations=types.ToolAnnotations.model_validate(s.annotations) if s.annotations else None)
             for s in registry.specs()]

    async def list_tools(ctx: ServerRequestContext, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        result = await registry.call(params.name, params.arguments or {})
        content = []
        for c in result.content:
            if c.get("type") == "text":
                content.append(types.TextContent(text=c["text"]))
            elif c.get("type") == "image":
                data = c.get("data") or await asyncio.to_thread(image_data, c)  # a capture is encoded here
                content.append(types.ImageContent(data=data, mime_type=c.get("mimeType", "image/png")))
            else:
                content.append(types.TextContent(text=str(c)))
        return types.CallToolResult(content=content, is_error=result.is_error, structured_content=result.structured)

    return Server(name, version="0.1", on_list_tools=list_tools, on_call_tool=call_tool,
                  get_tool_input_schema=schemas.get)


async def serve_stdio(registry: ToolRegistry) -> None:
    server = build_server(registry)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


class HttpGateway:
    """Streamable HTTP on loopback; `url` once started; stop() shuts it down cleanly."""

    def __init__(self, registry: ToolRegistry, port: int = 0):
        self.registry, self.port = registry, port
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    async def start(self) -> None:
        if not self.port:
            self.port = free_port()
        app = build_server(self.registry).streamable_http_app(streamable_http_path="/mcp")
        self._server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.02)

    async def stop(self) -> None:
        if self._server:
            self._server.should_exit = True
            await self._task
