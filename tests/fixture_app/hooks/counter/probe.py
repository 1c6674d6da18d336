"""The Counter's mcpworld probe: a plug-in the app imports at start. It authenticates with the one-time run
config (deleted as it is read) and reports the app's events over the probe runtime's websocket client."""

import probe_client  # the runtime's client, placed beside this file


def start(app) -> None:
    config = probe_client.read_config()
    if config is None:  # not under mcpworld
        return
    client = probe_client.ProbeClient.from_config(config)
    app.on("ready", lambda: client.emit("ui_ready", {"title": app.title, "items": len(app.items)}))
    app.on("item_added", lambda name, count: client.emit("item_added", {"name": name, "count": count}))
