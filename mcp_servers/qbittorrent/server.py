"""qBittorrent MCP server over its WebUI API v2 (the `qbittorrent-api` client), for the running qBittorrent.

QBT_URL, QBT_USERNAME and QBT_PASSWORD say where and who (the run's password: the WebUI asks for it even
from loopback). Every tool is one or a few WebUI requests, so what it does is what qBittorrent does for its
own WebUI: the GUI shows it, and the same session functions run as for a click (what the hooks observe).
Torrents are named by their name (as the GUI lists them) or their hash. Speeds are in KiB/s, as the GUI
shows them (the WebUI's bytes/s are converted); 0 means unlimited. A refused request is an `isError` result.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import qbittorrentapi
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from mcp_servers.hints import ADD, READ, REMOVE, SET, START

KIB = 1024
ADD_WAIT = 15.0


class Qbt:
    """One logged-in WebUI client, logged in again when qBittorrent dropped the session."""

    def __init__(self, url: str, username: str, password: str):
        self.client = qbittorrentapi.Client(host=url, username=username, password=password,
                                            REQUESTS_ARGS={"timeout": 30}, VERIFY_WEBUI_CERTIFICATE=False)
        self._lock = threading.Lock()

    def __call__(self, method: str, **kwargs: Any) -> Any:
        with self._lock:
            try:
                return getattr(self.client, method)(**kwargs)
            except qbittorrentapi.LoginFailed as e:
                raise ToolError(f"qBittorrent refused the login: {e}") from None
            except qbittorrentapi.APIConnectionError as e:
                raise ToolError(f"qBittorrent is not reachable over its WebUI ({e}); is it running?") from None
            except qbittorrentapi.HTTPError as e:
                raise ToolError(f"qBittorrent refused {method}: {e}") from None


@asynccontextmanager
async def lifespan(server: MCPServer) -> AsyncIterator[Qbt]:
    yield Qbt(os.environ.get("QBT_URL", "http://127.0.0.1:8080"), os.environ.get("QBT_USERNAME", "admin"),
              os.environ.get("QBT_PASSWORD", ""))


mcp = MCPServer("qbittorrent", lifespan=lifespan,
                instructions="Tools for the running qBittorrent: its torrents (add from a .torrent file, pause, "
                             "resume, remove, per-torrent speed limits, tags, categories) and the global speed "
                             "limits. Torrents are named as the transfer list shows them; speeds are KiB/s, 0 = unlimited.")


def tool(annotations):
    return mcp.tool(annotations=annotations, structured_output=True)


def _qbt(ctx: Context) -> Qbt:
    return ctx.request_context.lifespan_context


def _kib(limit: int) -> int:
    return max(limit, 0) // KIB


def _torrent(t) -> dict[str, Any]:
    return {"name": t.name, "hash": t.hash, "state": t.state, "progress": round(t.progress, 4), "size": t.size,
            "save_path": t.save_path, "category": t.category or None,
            "tags": sorted(x.strip() for x in (t.tags or "").split(",") if x.strip()),
            "upload_limit_kib": _kib(t.up_limit), "download_limit_kib": _kib(t.dl_limit)}


def _hashes(ctx: Context, torrents: list[str]) -> list[str]:
    """Names or hashes -> hashes; an unknown one is an error naming it."""
    known = _qbt(ctx)("torrents_info")
    out = []
    for want in torrents:
        match = [t.hash for t in known if want in (t.name, t.hash)]
        if not match:
            raise ToolError(f"no torrent named '{want}' (there are: {', '.join(sorted(t.name for t in known)) or 'none'})")
        out.extend(match)
    return out


@tool(READ)
def list_torrents(ctx: Context) -> dict[str, Any]:
    """Every torrent in the transfer list: name, hash, state, progress, size, save path, category, tags, limits."""
    return {"torrents": [_torrent(t) for t in sorted(_qbt(ctx)("torrents_info"), key=lambda t: t.name)]}


@tool(ADD)
def add_torrent_file(ctx: Context, path: str, save_path: str | None = None, paused: bool = False,
                     tags: list[str] | None = None, category: str | None = None) -> dict[str, Any]:
    """Add a .torrent file (a path qBittorrent can read, e.g. ~/Desktop/x.torrent) to the transfer list."""
    if path == "~" or path.startswith("~/"):  # the app's home, as qBittorrent sees it
        path = os.environ.get("QBT_HOME", "~") + path[1:]
    before = {t.hash for t in _qbt(ctx)("torrents_info")}
    r = _qbt(ctx)("torrents_add", urls=path, save_path=save_path, is_paused=paused,
                  tags=",".join(tags) if tags else None, category=category)
    if r != "Ok.":
        raise ToolError(f"qBittorrent did not add {path}: {r}")
    # the WebUI answers before libtorrent has taken the torrent: wait until the list shows it
    deadline = time.monotonic() + ADD_WAIT
    while time.monotonic() < deadline:
        new = [t for t in _qbt(ctx)("torrents_info") if t.hash not in before]
        if new:
            return {"added": _torrent(new[0])}
        time.sleep(0.1)
    raise ToolError(f"{path} did not appear in the transfer list within {ADD_WAIT:.0f}s (already there, or not a "
                    "torrent qBittorrent can read?)")


@tool(START)
def pause_torrents(ctx: Context, torrents: list[str]) -> dict[str, Any]:
    """Pause torrents (by name or hash)."""
    _qbt(ctx)("torrents_pause", torrent_hashes=_hashes(ctx, torrents))
    return {"paused": torrents}


@tool(START)
def resume_torrents(ctx: Context, torrents: list[str]) -> dict[str, Any]:
    """Resume paused torrents (by name or hash)."""
    _qbt(ctx)("torrents_resume", torrent_hashes=_hashes(ctx, torrents))
    return {"resumed": torrents}


@tool(REMOVE)
def remove_torrents(ctx: Context, torrents: list[str], delete_files: bool = False) -> dict[str, Any]:
    """Remove torrents from the transfer list; with delete_files, their downloaded data too."""
    _qbt(ctx)("torrents_delete", torrent_hashes=_hashes(ctx, torrents), delete_files=delete_files)
    return {"removed": torrents, "deleted_files": delete_files}


@tool(SET)
def set_torrent_upload_limit(ctx: Context, torrents: list[str], kib_per_s: int) -> dict[str, Any]:
    """Set torrents' upload speed limit in KiB/s (0 = unlimited)."""
    _qbt(ctx)("torrents_set_upload_limit", limit=max(kib_per_s, 0) * KIB, torrent_hashes=_hashes(ctx, torrents))
    return {"torrents": torrents, "upload_limit_kib": kib_per_s}


@tool(SET)
def set_torrent_download_limit(ctx: Context, torrents: list[str], kib_per_s: int) -> dict[str, Any]:
    """Set torrents' download speed limit in KiB/s (0 = unlimited)."""
    _qbt(ctx)("torrents_set_download_limit", limit=max(kib_per_s, 0) * KIB, torrent_hashes=_hashes(ctx, torrents))
    return {"torrents": torrents, "download_limit_kib": kib_per_s}


@tool(READ)
def get_global_limits(ctx: Context) -> dict[str, Any]:
    """The global speed limits and the alternative ones, in KiB/s (0 = unlimited), and whether the alternative are on."""
    p = _qbt(ctx)("app_preferences")
    return {"download_kib": _kib(p["dl_limit"]), "upload_kib": _kib(p["up_limit"]),
            "alt_download_kib": _kib(p["alt_dl_limit"]), "alt_upload_kib": _kib(p["alt_up_limit"]),
            "alternative_on": str(_qbt(ctx)("transfer_speed_limits_mode")).strip() == "1"}


@tool(SET)
def set_global_limits(ctx: Context, download_kib: int | None = None, upload_kib: int | None = None) -> dict[str, Any]:
    """Set the global download and/or upload speed limit in KiB/s (0 = unlimited), as Options > Speed does."""
    prefs = {k: max(v, 0) * KIB for k, v in (("dl_limit", download_kib), ("up_limit", upload_kib)) if v is not None}
    if not prefs:
        raise ToolError("say download_kib, upload_kib or both")
    _qbt(ctx)("app_set_preferences", prefs=prefs)
    return get_global_limits(ctx)


@tool(READ)
def list_tags(ctx: Context) -> dict[str, Any]:
    """Every tag qBittorrent knows."""
    return {"tags": sorted(_qbt(ctx)("torrents_tags"))}


@tool(SET)
def add_tags(ctx: Context, torrents: list[str], tags: list[str]) -> dict[str, Any]:
    """Tag torrents (a tag that does not exist yet is created)."""
    _qbt(ctx)("torrents_add_tags", tags=tags, torrent_hashes=_hashes(ctx, torrents))
    return {"torrents": torrents, "tags": tags}


@tool(REMOVE)
def remove_tags(ctx: Context, torrents: list[str], tags: list[str]) -> dict[str, Any]:
    """Take tags off torrents."""
    _qbt(ctx)("torrents_remove_tags", tags=tags, torrent_hashes=_hashes(ctx, torrents))
    return {"torrents": torrents, "removed_tags": tags}


@tool(READ)
def list_categories(ctx: Context) -> dict[str, Any]:
    """Every category with its save path."""
    return {"categories": {name: c.savePath for name, c in _qbt(ctx)("torrents_categories").items()}}


@tool(SET)
def set_category(ctx: Context, torrents: list[str], category: str) -> dict[str, Any]:
    """Put torrents in a category ('' for none); the category must exist."""
    _qbt(ctx)("torrents_set_category", category=category, torrent_hashes=_hashes(ctx, torrents))
    return {"torrents": torrents, "category": category}


def main() -> None:
    mcp.run(transport="stdio")
