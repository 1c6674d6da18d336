"""One app MCP server as a tool provider: connected over stdio once per trial, tool list cached,
names namespaced `server__tool`; annotations, output schemas, content items, structured content and
isError passed through unchanged."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from pathlib import Path
from typing import Any

import psutil

from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

from gateway.base import ToolProvider, ToolResult, ToolSpec
from gateway.modes import SEP, Kind, mcp_tool_name


class McpServerProvider(ToolProvider):
    """The client lives in a task of its own: the SDK's anyio task group cancels the task that entered it
    when its server's pipes fail, and that must be this task, never the trial's. Closing is bounded; a
    server that outlives it is killed by the marker in its environment."""

    CLOSE_LIMIT = 15.0

    def __init__(self, server_name: str, command: list[str], env: dict[str, str], cwd: str | None = None,
                 call_timeout: float = 60.0, log: Path | None = None):
        self.name = server_name
        self._log = log  # the server's stderr (its tracebacks: a tool that crashed says only its name)
        self._marker = uuid.uuid4().hex
        self._params = StdioServerParameters(command=command[0], args=command[1:],
                                             env={**env, MARKER: self._marker}, cwd=cwd)
        self.call_timeout = call_timeout
        self._client: Client | None = None
        self._host: asyncio.Task | None = None
        self._closing = asyncio.Event()
        self._ended: BaseException | None = None  # how the client's task ended, when not by close()
        self._specs: list[ToolSpec] = []

    async def start(self) -> None:
        connected = asyncio.get_running_loop().create_future()
        self._host = asyncio.create_task(self._hold(connected), name=f"MCP client {self.name}")
        try:
            self._client = await connected
            tools, cursor = [], None
            while True:
                page = await self._client.list_tools(cursor=cursor) if cursor else await self._client.list_tools()
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
        except BaseException:
            with contextlib.suppress(Exception):  # the start's own error is the one to report
                await self.close()
            raise
        self._specs = [ToolSpec(name=mcp_tool_name(self.name, t.name), description=t.description or "",
                                input_schema=t.input_schema, kind=Kind.MCP, output_schema=t.output_schema,
                                annotations=t.annotations.model_dump(by_alias=True, exclude_none=True)
                                if t.annotations else {}) for t in tools]

    async def _hold(self, connected: asyncio.Future) -> None:
        try:
            with open(self._log, "a") if self._log else contextlib.nullcontext(sys.stderr) as errlog:
                async with Client(stdio_client(self._params, errlog=errlog),
                                  read_timeout_seconds=self.call_timeout) as client:
                    connected.set_result(client)
                    await self._closing.wait()
        except BaseException as e:  # noqa: BLE001 - this task's end is reported by close(), never raised here
            first = _first(e)
            if not connected.done():
                connected.set_exception(first if isinstance(first, Exception) else
                                        RuntimeError(f"the {self.name} MCP server did not start: {first!r}"))
            elif not self._closing.is_set():
                self._ended = first

    async def close(self) -> None:
        """Ask the client's task to end; cancel it after CLOSE_LIMIT; kill the server if even that is stuck."""
        host, self._client = self._host, None
        if host is None:
            return
        self._host = None
        self._closing.set()
        done, _ = await asyncio.wait({host}, timeout=self.CLOSE_LIMIT)
        if not done:
            host.cancel()
            done, _ = await asyncio.wait({host}, timeout=5.0)
        if not done:
            killed = _kill_marked(self._marker)
            await asyncio.wait({host}, timeout=5.0)
            raise RuntimeError(f"the {self.name} MCP client did not close within {self.CLOSE_LIMIT:.0f}s "
                               f"(killed {killed} server process(es))")
        if self._ended is not None:
            raise RuntimeError(f"the {self.name} MCP client ended early: {self._ended!r}")

    def specs(self) -> list[ToolSpec]:
        return list(self._specs)

    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        tool = name.split(SEP, 1)[1]
        if self._client is None:
            return ToolResult.error(f"the {self.name} MCP server is not connected")
        try:
            r = await self._client.call_tool(tool, args, read_timeout_seconds=self.call_timeout)
        except MCPError as e:
            return ToolResult.error(f"{self.name} MCP server error {e.code}: {e.message}")
        items = tuple(c.model_dump(by_alias=True, exclude_none=True, mode="json") for c in r.content)
        return ToolResult(items, is_error=bool(r.is_error), structured=r.structured_content)


MARKER = "MCPWORLD_MCP_CLIENT"  # set in each server's environment, to find it if it outlives its client


def _first(e: BaseException) -> BaseException:
    """The one exception inside (nested) exception groups, or the group itself."""
    while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
        e = e.exceptions[0]
    return e


def _kill_marked(marker: str) -> int:
    """Kill this process's descendants whose environment carries `marker` (a server stuck past its close)."""
    killed = 0
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.environ().get(MARKER) == marker:
                proc.kill()
                killed += 1
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return killed
