"""Blender's state, read live through the probe's bridge with the run's secret: the open file, the active
scene, windows, 3D views, and every object, material, scene, collection and other datablock Blender would
save, keyed by its session id (hooks/blender/mcpworld_probe/query.py). A Blender that is gone has no scene
to read: the query fails, and so does the task's success check.

`read_file` reads the .blend files in the work folders without Blender (blendfile.py): a file a task
saves is checked by what it holds."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from mcp_servers.bridge import Bridge


def query(ctx) -> dict:
    url = f"http://{ctx.values.app_host}:{ctx.values.port('bridge')}"
    state = Bridge(url, ctx.values.secret("bridge"), "Blender", timeout=ctx.timeout).call("state", {})
    return {**state, "read_from": "bridge"}


def _blendfile():
    name = "mcpworld_blender_blendfile"
    if name not in sys.modules:  # registered before it runs: its dataclasses look their module up
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("blendfile.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def read_file(path: str) -> dict | None:
    if not path.endswith(".blend"):
        return None
    return _blendfile().summary(path)
