"""One app MCP server as a tool provider: connected over stdio once per trial, tool list cached,
names namespaced `server__tool`; annotations, output schemas, content items, structured content and
isError passed through unchanged."""

from __future__ import annotations

import contextlib
from typing import Any

from mcp import Client, MCPError, StdioServerParameters

from gateway.base import ToolProvider, ToolResult, ToolSpec
from gateway.modes import SEP, Kind, mcp_tool_name


class McpServerProvider(ToolProvider):
    def __init__(self, server_name: str, command: list[str], env: dict[str, str], cwd: str | None = None,
                 call_timeout: float = 60.0):
        self.name = server_name
        self._params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=cwd)
        self.call_timeout = call_timeout
        self._stack = contextlib.AsyncExitStack()
        self._client: Client | None = None
        self._specs: list[ToolSpec] = []

    async def start(self) -> None:
        self._client = await self._stack.enter_async_context(Client(self._params, read_timeout_seconds=self.call_timeout))
        tools, cursor = [], None
        while True:
            page = await self._client.list_tools(cursor=cursor) if cursor else await self._client.list_tools()
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        self._specs = [ToolSpec(name=mcp_tool_name(self.name, t.name), description=t.description or "",
                                input_schema=t.input_schema, kind=Kind.MCP, output_schema=t.output_schema,
                                annotations=t.annotations.model_dump(by_alias=True, exclude_none=True)
                                if t.annotations else {}) for t in tools]

    async def close(self) -> None:
        await self._stack.aclose()
        self._client = None

    def specs(self) -> list[ToolSpec]:
        return list(self._specs)

    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        tool = name.split(SEP, 1)[1]
        try:
            r = await self._client.call_tool(tool, args, read_timeout_seconds=self.call_timeout)
        except MCPError as e:
            return ToolResult.error(f"{self.name} MCP server error {e.code}: {e.message}")
        items = tuple(c.model_dump(by_alias=True, exclude_none=True, mode="json") for c in r.content)
        return ToolResult(items, is_error=bool(r.is_error), structured=r.structured_content)
