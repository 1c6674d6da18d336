"""Gateway overhead: one MCP tool call through the gateway, in process, over streamable HTTP and over
stdio (`mcpworld gateway --transport stdio`), against the same call made straight to the app's MCP
server; and tools/list with every tool.

All in a real Anki trial: the call is anki__list_decks, which reads the collection through the app.
"""

from __future__ import annotations

import sys
import tempfile
import time

from mcpworld import paths
from mcpworld.bench.agents import ProbeAgent
from mcpworld.bench.stats import Figure, stat
from mcpworld.config.load import ResolvedTask
from mcpworld.trial import Trial, TrialOptions

TOOL = "list_decks"


async def _timed(n: int, call) -> list[float]:
    await call()  # warm: the first call pays for connection set-up
    out = []
    for _ in range(n):
        t = time.perf_counter()
        await call()
        out.append((time.perf_counter() - t) * 1000)
    return out


async def _in_trial(ctx, n: int) -> dict[str, list[float]]:
    from mcp import Client

    from gateway.mcp_provider import McpServerProvider
    from gateway.server import HttpGateway

    provider = next(p for p in ctx.tools.started if isinstance(p, McpServerProvider) and p.name == "anki")
    results: dict[str, list[float]] = {}
    async with Client(provider._params) as direct:  # the app's own server, a second instance, no gateway
        results["direct"] = await _timed(n, lambda: direct.call_tool(TOOL, {}))
    results["in_process"] = await _timed(n, lambda: ctx.tools.call(f"anki__{TOOL}", {}))
    gw = HttpGateway(ctx.tools)
    await gw.start()
    try:
        async with Client(gw.url) as http:
            results["http"] = await _timed(n, lambda: http.call_tool(f"anki__{TOOL}", {}))
            results["http_list"] = await _timed(max(5, n // 5), lambda: http.list_tools())
    finally:
        await gw.stop()
    return results


async def _stdio(rt: ResolvedTask, n: int) -> dict[str, list[float]]:
    from mcp import Client, StdioServerParameters

    with tempfile.TemporaryDirectory(prefix="mcpworld-bench-gw-") as tmp:
        params = StdioServerParameters(command=sys.executable, cwd=str(paths.ROOT),
                                       args=["-m", "mcpworld.cli", "gateway", "--task", rt.key, "--mode", "mcp",
                                             "--transport", "stdio", "--out", f"{tmp}/trial"])
        async with Client(params, read_timeout_seconds=120) as c:
            return {"stdio": await _timed(n, lambda: c.call_tool(f"anki__{TOOL}", {})),
                    "stdio_list": await _timed(max(5, n // 5), lambda: c.list_tools())}


async def measure(rt: ResolvedTask, n: int, out) -> list[Figure]:
    agent = ProbeAgent(lambda ctx: _in_trial(ctx, n))
    result = await Trial(rt, agent, TrialOptions(mode="mcp", timeout=600), out / "gateway").run()
    if agent.result is None:
        raise RuntimeError(f"gateway bench trial: {result.failure}: {result.failure_detail}")
    r = {**agent.result, **await _stdio(rt, n)}
    direct = stat(r["direct"])
    figs = []
    for key, label in (("in_process", "in process (the registry)"), ("http", "streamable HTTP"), ("stdio", "stdio")):
        s = stat(r[key])
        figs.append(Figure(part="gateway", name=f"MCP call through the gateway, {label}", unit="ms", value=s,
                           baseline_name="the same call straight to the app's MCP server (stdio)", baseline=direct,
                           target="under 2 ms over the direct call",
                           note=f"overhead: {s.median - direct.median:+.2f} ms median"))
    for key, label in (("http_list", "HTTP"), ("stdio_list", "stdio")):
        figs.append(Figure(part="gateway", name=f"tools/list through the gateway, {label}", unit="ms",
                           value=stat(r[key]), note="every tool of the mode"))
    return figs
