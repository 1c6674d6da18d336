"""VS Code's end-of-run state: the editor as the probe's bridge reads it live (tabs, visible editors, the
cursor, unsaved files, the watched settings at each scope, terminals) and the workspace's files as they are
on disk (each with its size and hash, and its text when small), read on the host through the environment's
path mapping. A VS Code that is gone has no editor to read: the query fails, and so does the success check."""

from __future__ import annotations

import hashlib
import os

from mcp_servers.bridge import Bridge

MAX_TEXT = 64 * 1024
SKIP = {".git", "node_modules"}


def files(root: str) -> list[dict]:
    out = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP)
        rel = os.path.relpath(folder, root)
        for d in dirs:
            out.append({"path": os.path.normpath(os.path.join(rel, d)) + "/", "kind": "folder"})
        for n in sorted(names):
            p = os.path.join(folder, n)
            data = open(p, "rb").read()
            item = {"path": os.path.normpath(os.path.join(rel, n)), "kind": "file", "size": len(data),
                    "sha256": hashlib.sha256(data).hexdigest()}
            if len(data) <= MAX_TEXT:
                item["text"] = data.decode("utf-8", "replace")
            out.append(item)
    return out


def query(ctx) -> dict:
    url = f"http://{ctx.values.app_host}:{ctx.values.port('bridge')}"
    state = Bridge(url, ctx.values.secret("bridge"), "VS Code", timeout=ctx.timeout).call("state", {})
    return {**state, "files": files(ctx.host_path(ctx.values.path("workspace"))), "read_from": "bridge"}
