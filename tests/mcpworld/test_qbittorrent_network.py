"""qBittorrent sends nothing beyond loopback, in a real trial of qbittorrent/171: with its four torrents
started and given time to reach out (DHT, LSD, UPnP and trackers would bind and send within seconds, were
they on), every socket of the app and its children is bound to a loopback address, and none has a peer
beyond it. Read from the kernel's socket tables for the app's processes (psutil), not from its settings."""

import asyncio
import ipaddress

import psutil

from mcpworld.config.load import load_tasks
from tests.mcpworld.test_trial import run_trial, structured

T171 = load_tasks(app="qbittorrent")["qbittorrent/171"]


def _loopback(addr) -> bool:
    return not addr or ipaddress.ip_address(addr.ip).is_loopback


async def test_no_socket_reaches_beyond_loopback(tmp_path):
    seen = {}

    async def script(ctx, trial):
        torrents = structured(await ctx.tools.call("qbittorrent__list_torrents", {}))["torrents"]
        structured(await ctx.tools.call("qbittorrent__resume_torrents", {"torrents": [t["name"] for t in torrents]}))
        await asyncio.sleep(8)
        app = psutil.Process(trial.app_proc.pid)
        procs = [app, *app.children(recursive=True)]
        seen["names"] = {p.name() for p in procs}
        seen["sockets"] = [(c.type.name, c.laddr, c.raddr) for p in procs for c in p.net_connections("inet")]

    _, r = await run_trial(tmp_path, script, mode="mcp", task=T171)
    assert r.failure != "setup_error", r.failure_detail
    assert any("qbittorrent" in n for n in seen["names"]), seen["names"]
    # the WebUI's and the session's listening sockets at least: the check read real sockets
    assert any(kind == "SOCK_STREAM" and not raddr for kind, _, raddr in seen["sockets"]), seen["sockets"]
    beyond = [s for s in seen["sockets"] if not (_loopback(s[1]) and _loopback(s[2]))]
    assert not beyond, beyond
