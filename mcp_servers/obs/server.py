"""OBS Studio MCP server over obs-websocket v5 (the `obsws-python` client), for the running OBS.

OBS_WS_URL (ws://host:port) and OBS_WS_PASSWORD say where; every tool is one or a few
obs-websocket requests, so what it does is what OBS does for any websocket client: the GUI shows
it and libobs runs the same functions as for a click (which is what the task hooks observe).
The connection lives in the server's lifespan; each tool returns a structured result and carries
annotations (read-only, destructive, idempotent); a refused request is an `isError` result.
Scene items are listed bottom to top (index 0 is drawn first, at the bottom of the Sources dock).
The tools are in scenes.py, sources.py and outputs.py.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlparse

import obsws_python as obsws
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

logging.getLogger("obsws_python").setLevel(logging.CRITICAL)


class Refused(ToolError):
    """OBS answered the request with a failure status (obs-websocket's RequestStatus code)."""

    def __init__(self, request: str, code: int, text: str):
        super().__init__(f"OBS refused {request}: {text}")
        self.code = code


NOT_FOUND = 600  # obs-websocket RequestStatus::ResourceNotFound


class Obs:
    """One obs-websocket connection, opened at the first request and again after OBS dropped it."""

    def __init__(self, url: str, password: str):
        self.url, self.password = urlparse(url), password
        self._client: obsws.ReqClient | None = None
        self._lock = threading.Lock()  # tools run in worker threads; the websocket client is not thread-safe

    def request(self, request: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
        with self._lock:
            for attempt in (0, 1):
                try:
                    if self._client is None:
                        self._client = obsws.ReqClient(host=self.url.hostname, port=self.url.port,
                                                       password=self.password, timeout=15)
                    return self._client.send(request, data, raw=True) or {}
                except obsws.error.OBSSDKRequestError as e:  # its text: the request, OBS's status code and comment
                    raise Refused(request, e.code, str(e)) from None
                except Exception as e:  # websocket-client raises its own types: reconnect once
                    self.close()
                    if attempt:
                        raise ToolError(f"OBS is not reachable over obs-websocket ({type(e).__name__}: {e}); "
                                        "is it running?") from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._client is not None:
            try:
                self._client.disconnect()
            except Exception:  # already gone
                pass
            self._client = None


@asynccontextmanager
async def lifespan(server: MCPServer) -> AsyncIterator[Obs]:
    obs = Obs(os.environ.get("OBS_WS_URL", "ws://127.0.0.1:4455"), os.environ.get("OBS_WS_PASSWORD", ""))
    try:
        yield obs
    finally:
        obs.close()


mcp = MCPServer("obs", lifespan=lifespan,
                instructions="Tools for the running OBS Studio: scenes and studio mode, sources (inputs) with "
                             "their settings and audio, scene items, filters, transitions, recording, "
                             "streaming, replay buffer, virtual camera, profiles and their parameters, "
                             "scene collections, video settings, hotkeys, statistics and screenshots.")


def tool(annotations: ToolAnnotations):
    return mcp.tool(annotations=annotations, structured_output=True)


def _req(ctx: Context, request: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
    """One obs-websocket request on the lifespan's connection."""
    return ctx.request_context.lifespan_context.request(request, data)


def _item_id(ctx: Context, scene: str, source: str) -> int:
    return _req(ctx, "GetSceneItemId", {"sceneName": scene, "sourceName": source})["sceneItemId"]


def main() -> None:
    from mcp_servers.obs import outputs, scenes, sources  # noqa: F401  (register their tools)

    mcp.run(transport="stdio")
