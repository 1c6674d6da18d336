"""Joplin's end-of-run state, read live through the probe's bridge with the run's secret: every notebook,
every note and to-do (notebook, done, due date, in the trash, location, text, tags, attachments), the
attachments and the note list's sort order, as the client's own models hold them. A client that is gone
has nothing to read: the query fails, and so does the success check."""

from __future__ import annotations

from mcp_servers.bridge import Bridge


def query(ctx) -> dict:
    url = f"http://{ctx.values.app_host}:{ctx.values.port('bridge')}"
    state = Bridge(url, ctx.values.secret("bridge"), "Joplin", timeout=ctx.timeout).call("state", {})
    return {**state, "read_from": "bridge"}
