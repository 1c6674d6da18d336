"""Gateway overhead: one MCP tool call through the gateway, in process, over streamable HTTP and over
stdio, against the same call made straight to the app's MCP server; and tools/list with every tool.

The call is the first benchmarked app's [bench] gateway_tool (a read-only tool that goes through the app).
The direct call and the in-process one are made inside one real trial of the app's bench task. HTTP and stdio are timed as an outside agent sees
them: `mcpworld gateway --transport http|stdio` in its own process (with its own trial of the same
task and snapshot), the client in this one, just as the direct call's server runs in a process of its own.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import tempfile
import time

from gateway.modes import SEP, Mode
from mcpworld import paths
from mcpworld.bench.agents import ProbeAgent
from mcpworld.bench.stats import Figure, stat
from mcpworld.config.load import ResolvedTask
from mcpworld.trial import Trial, TrialOptions
from gateway.net import free_port, wait_listening


async def _timed(n: int, call) -> list[float]:
    await call()  # warm: the first call pays for connection set-up
    out = []
    for _ in range(n):
        t = time.perf_counter()
        await call()
        out.append((time.perf_counter() - t) * 1000)
    return out


async def _in_trial(ctx, tool: str, n: int) -> dict[str, list[float]]:
    from mcp import Client

    from gateway.mcp_provider import McpServerProvider

    server, _, name = tool.partition(SEP)
    provider = next(p for p in ctx.tools.started if isinstance(p, McpServerProvider) and p.name == server)
    results: dict[str, list[float]] = {}
    async with Client(provider._params) as direct:  # the app's own server, a second instance, no gateway
        results["direct"] = await _timed(n, lambda: direct.call_tool(name, {}))
    results["in_process"] = await _timed(n, lambda: ctx.tools.call(tool, {}))
    return results


def _gateway_argv(rt: ResolvedTask, transport: str, out: str) -> list[str]:
    return ["-m", "mcpworld.cli", "gateway", "--task", rt.key, "--mode", Mode.MCP, "--transport", transport, "--out", out]


async def _timed_client(client, n: int, key: str, tool: str) -> dict[str, list[float]]:
    async with client as c:
        return {key: await _timed(n, lambda: c.call_tool(tool, {})),
                f"{key}_list": await _timed(max(5, n // 5), lambda: c.list_tools())}


async def _stdio(rt: ResolvedTask, tool: str, n: int) -> dict[str, list[float]]:
    from mcp import Client, StdioServerParameters

    with tempfile.TemporaryDirectory(prefix="mcpworld-bench-gw-") as tmp:
        params = StdioServerParameters(command=sys.executable, cwd=str(paths.ROOT),
                                       args=_gateway_argv(rt, "stdio", f"{tmp}/trial"))
        return await _timed_client(Client(params, read_timeout_seconds=120), n, "stdio", tool)


async def _over_http(argv: list[str], n: int, key: str, tool: str) -> dict[str, list[float]]:
    """Start an HTTP MCP server as a child process (`argv` without the port), time calls to it, stop it."""
    from mcp import Client

    port = free_port()
    proc = await asyncio.create_subprocess_exec(sys.executable, *argv, str(port), cwd=str(paths.ROOT),
                                                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    try:
        # a gateway's port opens once its trial's app is ready and the tools are served
        if not await wait_listening("127.0.0.1", port, 120, lambda: proc.returncode is None):
            err = (await proc.stderr.read()).decode()[-2000:] if proc.returncode is not None else ""
            raise RuntimeError(f"{' '.join(argv)}: no HTTP server came up: {err}")
        return await _timed_client(Client(f"http://127.0.0.1:{port}/mcp"), n, key, tool)
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGINT)  # a served trial then evaluates and tears down
            try:
                await asyncio.wait_for(proc.wait(), 60)
            except asyncio.TimeoutError:
                proc.kill()


async def _http(rt: ResolvedTask, tool: str, n: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory(prefix="mcpworld-bench-gw-") as tmp:
        return await _over_http(_gateway_argv(rt, "http", f"{tmp}/trial") + ["--port"], n, "http", tool)


async def _floor(n: int) -> dict[str, list[float]]:
    """One hop of the MCP SDK alone: a no-op tool in another process, over stdio and over HTTP."""
    from mcp import Client, StdioServerParameters

    noop = ["-m", "mcpworld.bench.noop_server"]
    stdio = StdioServerParameters(command=sys.executable, args=[*noop, "stdio"], cwd=str(paths.ROOT))
    gw = ["-m", "mcpworld.bench.noop_gateway"]
    gw_stdio = StdioServerParameters(command=sys.executable, args=[*gw, "stdio"], cwd=str(paths.ROOT))
    tool = f"noop{SEP}noop"
    return {**await _timed_client(Client(stdio), n, "floor_stdio", "noop"),
            **await _over_http(noop, n, "floor_http", "noop"),
            **await _timed_client(Client(gw_stdio), n, "noop_gw_stdio", tool),
            **await _over_http(gw, n, "noop_gw_http", tool)}


async def measure(bench_tasks: dict[str, ResolvedTask], n: int, out) -> list[Figure]:
    rt = next((rt for rt in bench_tasks.values() if rt.app.bench.gateway_tool), None)
    if rt is None:
        raise RuntimeError("no installed app names a [bench] gateway_tool")
    tool = rt.app.bench.gateway_tool
    agent = ProbeAgent(lambda ctx: _in_trial(ctx, tool, n))
    result = await Trial(rt, agent, TrialOptions(mode=Mode.MCP, timeout=600), out / "gateway").run()
    if agent.result is None:
        raise RuntimeError(f"gateway bench trial: {result.failure}: {result.failure_detail}")
    r = {**agent.result, **await _stdio(rt, tool, n), **await _http(rt, tool, n), **await _floor(n)}
    direct = stat(r["direct"])
    floors = {"http": stat(r["floor_http"]), "stdio": stat(r["floor_stdio"])}
    figs = []
    for key, label in (("in_process", "in process (the registry)"), ("http", "streamable HTTP"), ("stdio", "stdio")):
        s = stat(r[key])
        over = s.median - direct.median
        note = f"overhead: {over:+.2f} ms median"
        target = "within 0.5 ms of the direct call"
        if key in floors:
            floor = floors[key].median
            note += (f", of which one {label} hop of the MCP SDK alone (a no-op tool in another process) "
                     f"is {floor:.2f} ms: {over - floor:+.2f} ms over that floor; its trial also records "
                     f"whatever events the app emits meanwhile, on the gateway's event loop")
            target = f"within 0.5 ms of the direct call plus one {label} hop of the SDK"
        figs.append(Figure(part="gateway", name=f"MCP call through the gateway, {label}", unit="ms", value=s,
                           baseline_name="the same call straight to the app's MCP server (stdio)", baseline=direct,
                           target=target, note=note))
    for key, label in (("http", "streamable HTTP"), ("stdio", "stdio")):
        figs.append(Figure(part="gateway", name=f"a no-op MCP tool in another process, {label}", unit="ms",
                           value=floors[key], note="the MCP SDK's own cost of one hop: the floor under a gateway hop"))
    for key, label in (("http", "streamable HTTP"), ("stdio", "stdio")):
        # the gateway's two hops (its clients to it, it to the app's server over stdio), each timed alone
        hops = [a + b for a, b in zip(sorted(r[f"floor_{key}"]), sorted(r["floor_stdio"]))]
        figs.append(Figure(part="gateway", name=f"the gateway alone, a no-op server behind it, {label}", unit="ms",
                           value=stat(r[f"noop_gw_{key}"]), baseline=stat(hops),
                           baseline_name=f"the SDK's own hops: one {label} plus one stdio (no-op tool)",
                           target="within 0.5 ms of the SDK's hops",
                           note="no app and no trial in the gateway's process: what the gateway's own code adds"))
    for key, label in (("http_list", "HTTP"), ("stdio_list", "stdio")):
        figs.append(Figure(part="gateway", name=f"tools/list through the gateway, {label}", unit="ms",
                           value=stat(r[key]), note="every tool of the mode"))
    return figs
