"""Joplin MCP server. Notes, notebooks, tags and to-dos go through Joplin's Data API (JOPLIN_API_URL, the run's
token), which runs inside the terminal client the agent sees: the TUI shows each change at once, and the
probe sees it as it sees the same change typed. What the Data API cannot do (the note list's sort order, the
selected note, Joplin's importer, attachments from a file) goes through the probe's bridge, which uses the
client's own commands. Notes are named by title, with the notebook where a title is not unique.
Structured results; an error is an `isError` result.

Compared with PyPI's `joplin-mcp` (apps/joplin/NOTES.md): the same note, notebook, tag and trash operations,
plus attachments, location, sort order, the selected note and Joplin's own importer.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from mcp_servers.bridge import Bridge
from mcp_servers.hints import ACT, ADD, READ, REMOVE, SET

NOTE_FIELDS = "id,title,parent_id,is_todo,todo_completed,todo_due,deleted_time,latitude,longitude"


class DataApi:
    def __init__(self, url: str, token: str, timeout: float = 30.0):
        self.url, self.token, self.timeout = url.rstrip("/"), token, timeout

    def call(self, method: str, path: str, query: dict | None = None, body: dict | None = None) -> Any:
        q = urllib.parse.urlencode({**(query or {}), "token": self.token})
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"{self.url}/{path}?{q}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                text = resp.read()
        except urllib.error.HTTPError as e:
            try:
                raise ToolError(f"Joplin: {json.loads(e.read()).get('error', e.code)}") from None
            except ValueError:
                raise ToolError(f"Joplin's Data API answered HTTP {e.code}") from None
        except (urllib.error.URLError, OSError) as e:
            raise ToolError(f"Joplin is not reachable ({e}); is it running?") from None
        return json.loads(text) if text.strip() else None

    def all(self, path: str, query: dict | None = None) -> list[dict]:
        out, page = [], 1
        while True:
            got = self.call("GET", path, {**(query or {}), "page": page, "limit": 100})
            out += got["items"]
            if not got.get("has_more"):
                return out
            page += 1


class Joplin:
    def __init__(self):
        self.api = DataApi(os.environ.get("JOPLIN_API_URL", ""), os.environ.get("JOPLIN_API_TOKEN", ""))
        self.bridge = Bridge(os.environ.get("JOPLIN_BRIDGE_URL", ""), os.environ.get("JOPLIN_BRIDGE_TOKEN", ""), "Joplin")

    def folders(self) -> list[dict]:
        return self.api.all("folders", {"fields": "id,title,parent_id"})

    def folder(self, title: str) -> dict:
        for f in self.folders():
            if f["title"] == title:
                return f
        raise ToolError(f"no notebook '{title}' (notebooks: {', '.join(f['title'] for f in self.folders())})")

    def note(self, title: str, notebook: str | None = None, trashed: bool = False) -> dict:
        query = {"fields": NOTE_FIELDS, **({"include_deleted": "1"} if trashed else {})}
        notes = [n for n in self.api.all("notes", query) if n["title"] == title and bool(n["deleted_time"]) == trashed]
        if notebook is not None:
            fid = self.folder(notebook)["id"] if not trashed else None
            notes = [n for n in notes if fid is None or n["parent_id"] == fid]
        if not notes:
            raise ToolError(f"no {'trashed ' if trashed else ''}note '{title}'{f' in {notebook}' if notebook else ''}")
        if len(notes) > 1:
            raise ToolError(f"{len(notes)} notes are titled '{title}': name the notebook")
        return notes[0]

    def describe(self, n: dict) -> dict:
        titles = {f["id"]: f["title"] for f in self.folders()}
        return {"id": n["id"], "title": n["title"], "notebook": titles.get(n["parent_id"]), "is_todo": bool(n["is_todo"]),
                "done": bool(n["todo_completed"]), "todo_due": n["todo_due"] or 0, "trashed": bool(n["deleted_time"]),
                "latitude": float(n["latitude"]), "longitude": float(n["longitude"])}

    def save(self, n: dict, **fields) -> dict:
        self.api.call("PUT", f"notes/{n['id']}", body=fields)
        return self.describe(self.api.call("GET", f"notes/{n['id']}", {"fields": NOTE_FIELDS}))


@asynccontextmanager
async def lifespan(server: MCPServer) -> AsyncIterator[Joplin]:
    yield Joplin()


mcp = MCPServer("joplin", lifespan=lifespan, instructions=(
    "Tools for the running Joplin (its terminal client): notebooks, notes and to-dos (create, rename, edit, move, "
    "tag, complete, due dates, location, trash and restore), attachments, import, the note list's sort order and "
    "the selected note. Notes are named by title, with the notebook where a title is not unique."))


def tool(annotations):
    return mcp.tool(annotations=annotations, structured_output=True)


def j(ctx: Context) -> Joplin:
    return ctx.request_context.lifespan_context


Title = Annotated[str, Field(description="the note's title, exactly")]
Notebook = Annotated[str | None, Field(description="the notebook's title, where the note's title is not unique")]


@tool(READ)
def list_notebooks(ctx: Context) -> dict[str, Any]:
    """Every notebook: id, title, parent notebook id."""
    return {"notebooks": j(ctx).folders()}


@tool(READ)
def list_notes(ctx: Context, notebook: Notebook = None, trashed: bool = False) -> dict[str, Any]:
    """Notes and to-dos (of one notebook, or all), or those in the trash: title, notebook, to-do state."""
    jj = j(ctx)
    query = {"fields": NOTE_FIELDS, **({"include_deleted": "1"} if trashed else {})}
    notes = [n for n in jj.api.all("notes", query) if bool(n["deleted_time"]) == trashed]
    if notebook is not None and not trashed:
        fid = jj.folder(notebook)["id"]
        notes = [n for n in notes if n["parent_id"] == fid]
    return {"notes": [jj.describe(n) for n in notes]}


@tool(READ)
def get_note(ctx: Context, title: Title, notebook: Notebook = None) -> dict[str, Any]:
    """One note with its text and tags."""
    jj = j(ctx)
    n = jj.note(title, notebook)
    body = jj.api.call("GET", f"notes/{n['id']}", {"fields": "body"})["body"]
    tags = [t["title"] for t in jj.api.all(f"notes/{n['id']}/tags", {"fields": "id,title"})]
    return {**jj.describe(n), "body": body, "tags": tags}


@tool(READ)
def list_tags(ctx: Context) -> dict[str, Any]:
    """Every tag."""
    return {"tags": [t["title"] for t in j(ctx).api.all("tags", {"fields": "id,title"})]}


@tool(ADD)
def create_notebook(ctx: Context, title: str) -> dict[str, Any]:
    """Create a notebook."""
    return j(ctx).api.call("POST", "folders", body={"title": title})


@tool(ADD)
def create_note(ctx: Context, title: str, notebook: str, body: str = "",
                is_todo: Annotated[bool, Field(description="a to-do rather than a note")] = False) -> dict[str, Any]:
    """Create a note (or a to-do) in a notebook."""
    jj = j(ctx)
    made = jj.api.call("POST", "notes", body={"title": title, "body": body, "parent_id": jj.folder(notebook)["id"],
                                               "is_todo": 1 if is_todo else 0})
    return jj.describe(jj.api.call("GET", f"notes/{made['id']}", {"fields": NOTE_FIELDS}))


@tool(SET)
def rename_note(ctx: Context, title: Title, new_title: str, notebook: Notebook = None) -> dict[str, Any]:
    """Change a note's title."""
    jj = j(ctx)
    return jj.save(jj.note(title, notebook), title=new_title)


@tool(SET)
def set_note_body(ctx: Context, title: Title, body: str, notebook: Notebook = None) -> dict[str, Any]:
    """Replace a note's whole text."""
    jj = j(ctx)
    return jj.save(jj.note(title, notebook), body=body)


@tool(ADD)
def append_to_note(ctx: Context, title: Title, text: str, notebook: Notebook = None) -> dict[str, Any]:
    """Add text at the end of a note (on a new line)."""
    jj = j(ctx)
    n = jj.note(title, notebook)
    body = jj.api.call("GET", f"notes/{n['id']}", {"fields": "body"})["body"]
    return jj.save(n, body=(body + "\n" if body and not body.endswith("\n") else body) + text)


@tool(SET)
def move_note(ctx: Context, title: Title, to_notebook: str, notebook: Notebook = None) -> dict[str, Any]:
    """Move a note to another notebook."""
    jj = j(ctx)
    return jj.save(jj.note(title, notebook), parent_id=jj.folder(to_notebook)["id"])


@tool(SET)
def tag_note(ctx: Context, title: Title, tags: list[str], notebook: Notebook = None) -> dict[str, Any]:
    """Put tags on a note (a tag that does not exist yet is created)."""
    jj = j(ctx)
    n = jj.note(title, notebook)
    existing = {t["title"]: t["id"] for t in jj.api.all("tags", {"fields": "id,title"})}
    for tag in tags:
        tid = existing.get(tag.lower()) or existing.get(tag) or jj.api.call("POST", "tags", body={"title": tag})["id"]
        jj.api.call("POST", f"tags/{tid}/notes", body={"id": n["id"]})
    return {"note": title, "tags": [t["title"] for t in jj.api.all(f"notes/{n['id']}/tags", {"fields": "id,title"})]}


@tool(REMOVE)
def untag_note(ctx: Context, title: Title, tag: str, notebook: Notebook = None) -> dict[str, Any]:
    """Take a tag off a note."""
    jj = j(ctx)
    n = jj.note(title, notebook)
    for t in jj.api.all(f"notes/{n['id']}/tags", {"fields": "id,title"}):
        if t["title"].lower() == tag.lower():
            jj.api.call("DELETE", f"tags/{t['id']}/notes/{n['id']}")
            return {"note": title, "removed": t["title"]}
    raise ToolError(f"'{title}' has no tag '{tag}'")


@tool(SET)
def set_todo_done(ctx: Context, title: Title, done: bool = True, notebook: Notebook = None) -> dict[str, Any]:
    """Set a to-do's done field (as the `done` and `undone` commands do)."""
    jj = j(ctx)
    n = jj.note(title, notebook)
    if not n["is_todo"]:
        raise ToolError(f"'{title}' is a note, not a to-do")
    return jj.save(n, todo_completed=int(datetime.now(timezone.utc).timestamp() * 1000) if done else 0)


@tool(ACT)
def toggle_todo(ctx: Context, title: Title, notebook: Notebook = None) -> dict[str, Any]:
    """Tick (or untick) a to-do's checkbox in the note list, as the space key does on the selected to-do."""
    return j(ctx).bridge.call("toggle_todo", {"note": title, "folder": notebook})


@tool(SET)
def set_todo_due(ctx: Context, title: Title, due: Annotated[str, Field(description="ISO date and time, e.g. 2026-12-15T10:00 (UTC unless an offset is given)")],
                 notebook: Notebook = None) -> dict[str, Any]:
    """Set a to-do's due date."""
    jj = j(ctx)
    when = datetime.fromisoformat(due)
    when = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
    return jj.save(jj.note(title, notebook), todo_due=int(when.timestamp() * 1000))


@tool(SET)
def set_location(ctx: Context, title: Title, latitude: Annotated[float, Field(ge=-90, le=90)],
                 longitude: Annotated[float, Field(ge=-180, le=180)], notebook: Notebook = None) -> dict[str, Any]:
    """Set a note's location (latitude and longitude in degrees)."""
    jj = j(ctx)
    return jj.save(jj.note(title, notebook), latitude=latitude, longitude=longitude)


@tool(REMOVE)
def delete_note(ctx: Context, title: Title, notebook: Notebook = None,
                permanent: Annotated[bool, Field(description="delete for good instead of moving it to the trash")] = False
                ) -> dict[str, Any]:
    """Delete a note or to-do: to the trash, or for good."""
    jj = j(ctx)
    n = jj.note(title, notebook)
    jj.api.call("DELETE", f"notes/{n['id']}", {"permanent": "1"} if permanent else {})
    return {"deleted": title, "permanent": permanent}


@tool(SET)
def restore_note(ctx: Context, title: Title) -> dict[str, Any]:
    """Bring a note back from the trash."""
    jj = j(ctx)
    return jj.save(jj.note(title, trashed=True), deleted_time=0)


@tool(ADD)
def attach_file(ctx: Context, title: Title, path: Annotated[str, Field(description="the file's absolute path (~ is the home)")],
                notebook: Notebook = None) -> dict[str, Any]:
    """Attach a file to a note (Joplin's `attach`: the file becomes a resource linked at the note's start)."""
    return j(ctx).bridge.call("attach_file", {"note": title, "folder": notebook, "path": path})


@tool(ADD)
def import_file(ctx: Context, path: Annotated[str, Field(description="a Markdown file or folder (~ is the home)")],
                notebook: str) -> dict[str, Any]:
    """Import a Markdown file into a notebook with Joplin's importer (the note is titled after the file)."""
    return j(ctx).bridge.call("import_file", {"path": path, "folder": notebook})


@tool(READ)
def get_settings(ctx: Context) -> dict[str, Any]:
    """The note list's sort order and the other user settings these tools can change."""
    return j(ctx).bridge.call("get_settings", {})


@tool(SET)
def set_setting(ctx: Context, key: Annotated[str, Field(description="notes.sortOrder.field (title, user_updated_time, user_created_time, order), notes.sortOrder.reverse, showCompletedTodos, uncompletedTodosOnTop, dateFormat, timeFormat")],
                value: Any) -> dict[str, Any]:
    """Change a user setting, as the client's `config` command does."""
    return j(ctx).bridge.call("set_setting", {"key": key, "value": value})


@tool(ACT)
def open_note(ctx: Context, title: Title, notebook: Notebook = None) -> dict[str, Any]:
    """Show a note in the client: its notebook, then the note selected."""
    return j(ctx).bridge.call("open_note", {"note": title, "folder": notebook})


def main() -> None:
    mcp.run("stdio")


if __name__ == "__main__":
    main()
