"""QGIS's end-of-run state, read live through the probe's bridge with the run's secret: the project (file,
title, CRS, unsaved changes), every layer in the Layers panel's order and the map canvas
(hooks/qgis/mcpworld_probe/state.py). A QGIS that is gone has no project to read: the query fails, and so
does the task's success check."""

from __future__ import annotations

from mcp_servers.bridge import Bridge


def query(ctx) -> dict:
    url = f"http://{ctx.values.app_host}:{ctx.values.port('bridge')}"
    state = Bridge(url, ctx.values.secret("bridge"), "QGIS", timeout=ctx.timeout).call("state", {})
    return {**state, "read_from": "bridge"}
