"""Blender's end-of-run state, read live through the probe's bridge with the run's secret: the open file
(and whether it is on disk), windows, 3D views, mode and every object (hooks/blender/mcpworld_probe/state.py).
A Blender that is gone has no scene to read: the query fails, and so does the task's success check."""

from __future__ import annotations

from mcp_servers.bridge import Bridge


def query(ctx) -> dict:
    url = f"http://{ctx.values.app_host}:{ctx.values.port('bridge')}"
    state = Bridge(url, ctx.values.secret("bridge"), "Blender", timeout=ctx.timeout).call("state", {})
    return {**state, "read_from": "bridge"}
