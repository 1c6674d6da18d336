"""The gateway with nothing behind it but the no-op MCP server (over stdio), served over stdio or streamable
HTTP: its own cost per call, without an app or a trial in its process.
`python -m mcpworld.bench.noop_gateway stdio|PORT`"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from gateway.mcp_provider import McpServerProvider
from gateway.modes import Mode
from gateway.registry import ToolFilter, ToolRegistry
from gateway.server import HttpGateway, serve_stdio
from mcpworld import paths


async def main(where: str) -> None:
    noop = McpServerProvider("noop", [sys.executable, "-m", "mcpworld.bench.noop_server", "stdio"],
                             dict(os.environ), cwd=str(paths.ROOT))
    registry = ToolRegistry([noop], ToolFilter(Mode.MCP))
    await registry.start()
    try:
        if where == "stdio":
            await serve_stdio(registry)
            return
        gateway = HttpGateway(registry, int(where))
        await gateway.start()
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, stop.set)
        await stop.wait()
        await gateway.stop()
    finally:
        await registry.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
