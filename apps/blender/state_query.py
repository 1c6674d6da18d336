"""Blender's end-of-run state, read live through the probe's bridge with the run's secret: the open file
(and whether it is on disk), windows, 3D views, mode and every object (hooks/blender/mcpworld_probe/state.py).
A Blender that is gone has no scene to read: the query fails, and so does the task's success check."""

from __future__ import annotations

import json
import urllib.request


def query(ctx) -> dict:
    body = json.dumps({"method": "state", "params": {}}).encode()
    url = f"http://{ctx.values.app_host}:{ctx.values.port('bridge')}"
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json",
                                                          "Authorization": f"Bearer {ctx.values.secret('bridge')}"})
    with urllib.request.urlopen(req, timeout=ctx.timeout) as resp:
        reply = json.loads(resp.read())
    if "error" in reply:
        raise RuntimeError(f"bridge: {reply['error']}")
    return {**reply["result"], "read_from": "bridge"}
