"""qBittorrent's state, read live over its WebUI API on loopback with the run's password (qBittorrent saves its
resume data asynchronously, so its files may lag behind what it holds).

    torrents     every torrent by its info hash (the WebUI's "hash": the v1 hash, or the v2 one cut to 40 hex
                 digits; a name two torrents can share, the hash not): name, what the agent can set on it (paused
                 or not, force start, save and download paths, category, tags, limits, queue position, share
                 limits, sequential download and the like), its trackers and web seeds, and its files by index
                 (name, size, priority)
    categories   by name (qBittorrent keeps category names unique): save path, download path
    tags         qBittorrent's tag list
    prefs        every preference the WebUI reports (app/preferences), by its WebUI name: the global and
                 alternative limits (bytes/s), the default save path, queueing, connections, the WebUI itself...
    alt_speed    whether the alternative speed limits are on (the status bar's turtle)

What moves on its own (speeds, progress, peers, ETA, the exact state: checking, stalled, seeding) is not read.
"""

from __future__ import annotations

import time
from typing import Any

# qBittorrent's state of a torrent, to what the agent decides; the rest (checking, stalled, downloading, seeding,
# queued: the queueing system holds a torrent back for a second after another one finished) it moves through itself
STATES = {"pausedDL": "paused", "pausedUP": "paused", "error": "error", "missingFiles": "missing_files"}
# states a torrent passes through right after it was added, resumed or moved; its queue position is settled after
SETTLING = {"checkingResumeData", "checkingDL", "checkingUP", "allocating", "moving", "metaDL", "forcedMetaDL"}
SETTLE_WAIT = 5.0
PSEUDO_TRACKER = "** ["  # the DHT, PeX and LSD rows of a torrent's tracker list


def client(values, timeout: float):
    import qbittorrentapi

    c = qbittorrentapi.Client(host=f"http://{values.app_host}:{values.port('webui')}", username="mcpworld",
                              password=values.secret("webui"), REQUESTS_ARGS={"timeout": timeout},
                              VERIFY_WEBUI_CERTIFICATE=False, RAISE_NOTIMPLEMENTEDERROR_FOR_UNIMPLEMENTED_API_ENDPOINTS=False)
    c.auth_log_in()
    return c


def _torrent(c, t) -> dict[str, Any]:
    files = c.torrents_files(torrent_hash=t.hash)
    trackers = c.torrents_trackers(torrent_hash=t.hash)
    seeds = c.torrents_webseeds(torrent_hash=t.hash)
    return {
        "hash": t.hash,
        "name": t.name,
        "state": STATES.get(t.state, "active"),
        "force_start": bool(t.force_start),
        "save_path": t.save_path,
        "download_path": t.get("download_path", ""),
        "category": t.category or "",
        "tags": sorted(x.strip() for x in (t.tags or "").split(",") if x.strip()),
        "up_limit": max(t.up_limit, 0),
        "dl_limit": max(t.dl_limit, 0),
        "queue_position": t.priority,
        "ratio_limit": t.ratio_limit,
        "seeding_time_limit": t.seeding_time_limit,
        "auto_tmm": bool(t.auto_tmm),
        "sequential": bool(t.seq_dl),
        "first_last_piece_first": bool(t.f_l_piece_prio),
        "super_seeding": bool(t.super_seeding),
        "trackers": sorted(x.url for x in trackers if not x.url.startswith(PSEUDO_TRACKER)),
        "web_seeds": sorted(x.url for x in seeds),
        "files": [{"index": f.index, "name": f.name, "size": f.size, "priority": f.priority}
                  for f in sorted(files, key=lambda f: f.index)],
    }


def _settled(c) -> list:
    """The torrents once none is being checked (a torrent found complete leaves the download queue, and those after
    it move up), at most SETTLE_WAIT seconds."""
    deadline = time.monotonic() + SETTLE_WAIT
    while True:
        torrents = c.torrents_info()
        if not any(t.state in SETTLING for t in torrents) or time.monotonic() > deadline:
            return torrents
        time.sleep(0.1)


def query(ctx) -> dict:
    c = client(ctx.values, ctx.timeout)
    try:
        torrents = [_torrent(c, t) for t in sorted(_settled(c), key=lambda t: t.hash)]
        categories = {name: {"save_path": cat.get("savePath", ""), "download_path": cat.get("download_path") or ""}
                      for name, cat in c.torrents_categories().items()}
        return {"torrents": torrents, "categories": categories, "tags": sorted(c.torrents_tags()),
                "prefs": dict(sorted(c.app_preferences().items())),
                "alt_speed": str(c.transfer_speed_limits_mode()).strip() == "1", "read_from": "webui"}
    finally:
        try:
            c.auth_log_out()
        except Exception:
            pass
