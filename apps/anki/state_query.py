"""Anki's end-of-run state query: the whole collection as plain data.

Through the add-on's bridge while Anki runs; from collection.anki2 with the `anki` library when
Anki is gone (crashed, or closed by the agent) -- the file is only readable once Anki has let go.
"""

from __future__ import annotations

import importlib.util
import json
import urllib.request
from pathlib import Path

STATE_PY = Path(__file__).resolve().parents[2] / "hooks" / "anki" / "mcpworld_probe" / "state.py"


def _state_module():
    spec = importlib.util.spec_from_file_location("mcpworld_anki_state", STATE_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def query(ctx) -> dict:
    if ctx.app_alive:
        try:
            return {**_from_bridge(ctx), "read_from": "bridge"}
        except OSError:  # refused or reset: Anki died after all (its probe's goodbye was still in flight)
            pass
    return _from_file(ctx)


def _from_bridge(ctx) -> dict:
    body = json.dumps({"method": "state", "params": {}}).encode()
    url = f"http://{ctx.values.app_host}:{ctx.values.port('bridge')}"
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json",
                                                          "Authorization": f"Bearer {ctx.values.secret('bridge')}"})
    with urllib.request.urlopen(req, timeout=ctx.timeout) as resp:
        reply = json.loads(resp.read())
    if "error" in reply:
        raise RuntimeError(f"bridge: {reply['error']}")
    return reply["result"]


def _from_file(ctx) -> dict:
    from anki.collection import Collection

    paths = sorted(Path(ctx.values.path("base")).glob("*/collection.anki2"))
    if not paths:
        raise FileNotFoundError(f"no collection under {ctx.values.path('base')}")
    col = Collection(str(paths[0]))
    try:
        st = _state_module()
        return {**st.state(st.read(col)), "media": st.media(col), "read_from": "file"}
    finally:
        col.close()
