"""qBittorrent's end-of-run state, read over its WebUI API on loopback with the run's password: each
torrent (name, hash, state, limits in bytes/s, tags, save path), the global limits (bytes/s) and the
tag list. Read live only: qBittorrent saves its resume data asynchronously, so its files may lag."""

from __future__ import annotations

PAUSED = ("pausedDL", "pausedUP")


def client(values, timeout: float):
    import qbittorrentapi

    c = qbittorrentapi.Client(host=f"http://{values.app_host}:{values.port('webui')}", username="mcpworld",
                              password=values.secret("webui"), REQUESTS_ARGS={"timeout": timeout},
                              VERIFY_WEBUI_CERTIFICATE=False, RAISE_NOTIMPLEMENTEDERROR_FOR_UNIMPLEMENTED_API_ENDPOINTS=False)
    c.auth_log_in()
    return c


def query(ctx) -> dict:
    c = client(ctx.values, ctx.timeout)
    try:
        prefs = c.app_preferences()
        # not the state itself: it moves on its own (checking, stalled, seeding); paused or not is the agent's
        torrents = [{"name": t.name, "hash": t.hash, "paused": t.state in PAUSED,
                     "up_limit": max(t.up_limit, 0), "dl_limit": max(t.dl_limit, 0),
                     "tags": sorted(x.strip() for x in t.tags.split(",") if x.strip()), "save_path": t.save_path}
                    for t in sorted(c.torrents_info(), key=lambda t: t.name)]
        return {"torrents": torrents, "up_limit": prefs["up_limit"], "dl_limit": prefs["dl_limit"],
                "alt_up_limit": prefs["alt_up_limit"], "alt_dl_limit": prefs["alt_dl_limit"],
                "tags": sorted(c.torrents_tags()), "read_from": "webui"}
    finally:
        try:
            c.auth_log_out()
        except Exception:
            pass
