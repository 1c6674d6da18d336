"""Anki MCP server. Every tool is a call to the bridge inside the running Anki (ANKI_BRIDGE_URL),
so its actions are real Anki operations: visible in the GUI, undoable, and seen by the probe.
The bridge client lives in the server's lifespan; each tool returns a structured result and carries
annotations (read-only, destructive, idempotent); a bridge error is an `isError` result.

Searches use Anki's own search syntax (e.g. `tag:quote`, `deck:Default`, `"front:*quick*"`).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from mcp_servers.hints import ACT, ADD, READ, REMOVE, SET


class Bridge:
    """The add-on's bridge inside the running Anki: one JSON request per call over HTTP."""

    def __init__(self, url: str, token: str, timeout: float = 40.0):
        self.url, self.token, self.timeout = url, token, timeout

    def call(self, method: str, params: dict[str, Any]) -> Any:
        body = json.dumps({"method": method, "params": {k: v for k, v in params.items() if v is not None}}).encode()
        req = urllib.request.Request(self.url, data=body, headers={"Content-Type": "application/json",
                                                                   "Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                reply = json.loads(resp.read())
        except (urllib.error.URLError, OSError) as e:
            raise ToolError(f"Anki is not reachable ({e}); is it running?") from None
        if "error" in reply:
            raise ToolError(reply["error"])
        return reply.get("result")


@asynccontextmanager
async def lifespan(server: MCPServer) -> AsyncIterator[Bridge]:
    yield Bridge(os.environ.get("ANKI_BRIDGE_URL", "http://127.0.0.1:8765"), os.environ.get("ANKI_BRIDGE_TOKEN", ""))


mcp = MCPServer("anki", lifespan=lifespan,
                instructions="Tools for the running Anki desktop app: decks and their options, notes, cards, "
                             "note types, tags, media, scheduling, search, find-and-replace, undo and "
                             "preferences.")


def tool(annotations: ToolAnnotations):
    return mcp.tool(annotations=annotations, structured_output=True)


def _bridge(ctx: Context, method: str, **params: Any) -> Any:
    return ctx.request_context.lifespan_context.call(method, params)


@tool(READ)
def list_decks(ctx: Context) -> list[dict[str, Any]]:
    """List all decks with their ids and card counts."""
    return _bridge(ctx, "list_decks")


@tool(ADD)
def create_deck(ctx: Context, name: str) -> dict[str, Any]:
    """Create a deck. Use '::' for subdecks, e.g. 'Languages::French'."""
    return _bridge(ctx, "create_deck", name=name)


@tool(REMOVE)
def delete_deck(ctx: Context, name: str) -> dict[str, Any]:
    """Delete a deck and the cards in it."""
    return _bridge(ctx, "delete_deck", name=name)


@tool(SET)
def rename_deck(ctx: Context, name: str, new_name: str) -> dict[str, Any]:
    """Rename a deck."""
    return _bridge(ctx, "rename_deck", name=name, new_name=new_name)


@tool(ADD)
def add_note(ctx: Context, fields: dict[str, str], note_type: str = "Basic", deck: str = "Default", tags: list[str] | None = None,
             create_deck: bool = False) -> dict[str, Any]:
    """Add a note. `fields` maps field names to HTML content, e.g. {"Front": "<b>Q</b>", "Back": "A"}.
    Note types include 'Basic' (Front/Back) and 'Cloze' (Text, with {{c1::...}} deletions)."""
    return _bridge(ctx, "add_note", fields=fields, note_type=note_type, deck=deck, tags=tags or [], create_deck=create_deck)


@tool(SET)
def update_note(ctx: Context, note_id: int, fields: dict[str, str] | None = None, tags: list[str] | None = None) -> dict[str, Any]:
    """Change some fields and/or replace the tags of a note."""
    return _bridge(ctx, "update_note", note_id=note_id, fields=fields, tags=tags)


@tool(REMOVE)
def delete_notes(ctx: Context, query: str) -> dict[str, Any]:
    """Delete every note matching an Anki search (and its cards)."""
    return _bridge(ctx, "delete_notes", query=query)


@tool(READ)
def find_notes(ctx: Context, query: str, limit: int = 100) -> list[dict[str, Any]]:
    """Find notes with an Anki search; returns ids, note type, fields, tags, deck and card ids."""
    return _bridge(ctx, "find_notes", query=query, limit=limit)


@tool(ADD)
def store_media_file(ctx: Context, path: str) -> dict[str, Any]:
    """Copy an image or sound file (e.g. ~/Pictures/cat.png) into the collection's media folder; returns the
    stored file name, to use in a field as <img src="NAME">."""
    return _bridge(ctx, "store_media_file", path=path)


@tool(SET)
def move_cards(ctx: Context, query: str, deck: str) -> dict[str, Any]:
    """Move every card matching a search into a deck (created if missing)."""
    return _bridge(ctx, "move_cards", query=query, deck=deck)


@tool(SET)
def add_tags(ctx: Context, query: str, tags: list[str]) -> dict[str, Any]:
    """Add tags to every note matching a search."""
    return _bridge(ctx, "add_tags", query=query, tags=tags)


@tool(REMOVE)
def remove_tags(ctx: Context, query: str, tags: list[str]) -> dict[str, Any]:
    """Remove tags from every note matching a search."""
    return _bridge(ctx, "remove_tags", query=query, tags=tags)


@tool(REMOVE)
def clear_unused_tags(ctx: Context) -> dict[str, Any]:
    """Remove tags that no note uses from the tag list."""
    return _bridge(ctx, "clear_unused_tags")


@tool(SET)
def suspend_cards(ctx: Context, query: str) -> dict[str, Any]:
    """Suspend every card matching a search."""
    return _bridge(ctx, "suspend_cards", query=query)


@tool(SET)
def unsuspend_cards(ctx: Context, query: str) -> dict[str, Any]:
    """Unsuspend every card matching a search."""
    return _bridge(ctx, "unsuspend_cards", query=query)


@tool(SET)
def set_flag(ctx: Context, query: str, flag: int) -> dict[str, Any]:
    """Flag every card matching a search: 0 none, 1 red, 2 orange, 3 green, 4 blue, 5 pink, 6 turquoise, 7 purple."""
    return _bridge(ctx, "set_flag", query=query, flag=flag)


@tool(SET)
def set_due_date(ctx: Context, query: str, days: str) -> dict[str, Any]:
    """Set the due date of matching cards: '0' today, '5' in five days, '5-7' a range, '5!' also sets the interval."""
    return _bridge(ctx, "set_due_date", query=query, days=days)


@tool(READ)
def find_and_replace(ctx: Context, search: str, replacement: str, query: str = "", field: str | None = None, regex: bool = False,
                     match_case: bool = False) -> dict[str, Any]:
    """Find and replace text in the notes matching `query` (all notes when empty), in one field or all fields."""
    return _bridge(ctx, "find_and_replace", search=search, replacement=replacement, query=query, field=field, regex=regex,
                   match_case=match_case)


@tool(ACT)
def undo(ctx: Context) -> dict[str, Any]:
    """Undo the last operation (as Edit > Undo)."""
    return _bridge(ctx, "undo")


@tool(READ)
def list_note_types(ctx: Context) -> list[dict[str, Any]]:
    """List note types with their fields and card templates."""
    return _bridge(ctx, "list_note_types")


@tool(READ)
def get_note_type(ctx: Context, name: str) -> dict[str, Any]:
    """A note type's fields, CSS and card templates (front and back HTML)."""
    return _bridge(ctx, "get_note_type", name=name)


@tool(ADD)
def create_note_type(ctx: Context, name: str, copy_from: str | None = None, fields: list[str] | None = None,
                     templates: list[dict[str, str]] | None = None, css: str | None = None) -> dict[str, Any]:
    """Create a note type, either as a copy of an existing one (`copy_from`, e.g. 'Basic') or from `fields` and
    `templates` ([{"name": "Card 1", "front": "{{Question}}", "back": "{{FrontSide}}<hr id=answer>{{Answer}}"}])."""
    return _bridge(ctx, "create_note_type", name=name, copy_from=copy_from, fields=fields, templates=templates, css=css)


@tool(ADD)
def add_field(ctx: Context, note_type: str, field: str, position: int | None = None) -> dict[str, Any]:
    """Add a field to a note type; `position` is 1-based (default: last)."""
    return _bridge(ctx, "add_field", note_type=note_type, field=field, position=position)


@tool(SET)
def set_card_template(ctx: Context, note_type: str, front: str | None = None, back: str | None = None, template: str | None = None,
                      css: str | None = None) -> dict[str, Any]:
    """Change a card template's front and/or back HTML (default: the first template), and optionally the CSS."""
    return _bridge(ctx, "set_card_template", note_type=note_type, template=template, front=front, back=back, css=css)


@tool(READ)
def list_tags(ctx: Context) -> list[str]:
    """Every tag in the collection."""
    return _bridge(ctx, "list_tags")


@tool(SET)
def rename_tag(ctx: Context, tag: str, new_name: str) -> dict[str, Any]:
    """Rename a tag (and its child tags) on every note that has it."""
    return _bridge(ctx, "rename_tag", tag=tag, new_name=new_name)


@tool(READ)
def find_cards(ctx: Context, query: str, limit: int = 100) -> list[dict[str, Any]]:
    """Cards matching an Anki search, with their deck, template, scheduling (queue, type, due, interval,
    ease, reviews, lapses), flag and whether suspended."""
    return _bridge(ctx, "find_cards", query=query, limit=limit)


@tool(ACT)
def forget_cards(ctx: Context, query: str, restore_position: bool = False, reset_counts: bool = False) -> dict[str, Any]:
    """Reset the matching cards to new (Browse > Cards > Reset)."""
    return _bridge(ctx, "forget_cards", query=query, restore_position=restore_position, reset_counts=reset_counts)


@tool(SET)
def rename_field(ctx: Context, note_type: str, field: str, new_name: str) -> dict[str, Any]:
    """Rename a note type's field (templates referring to it follow)."""
    return _bridge(ctx, "rename_field", note_type=note_type, field=field, new_name=new_name)


@tool(REMOVE)
def remove_field(ctx: Context, note_type: str, field: str) -> dict[str, Any]:
    """Remove a field from a note type, and its content from every note of that type."""
    return _bridge(ctx, "remove_field", note_type=note_type, field=field)


@tool(ADD)
def add_card_template(ctx: Context, note_type: str, name: str, front: str, back: str) -> dict[str, Any]:
    """Add a card template (a card type) to a note type: its front and back HTML."""
    return _bridge(ctx, "add_card_template", note_type=note_type, name=name, front=front, back=back)


@tool(READ)
def get_deck_options(ctx: Context, deck: str) -> dict[str, Any]:
    """The options preset a deck uses, with Anki's keys (e.g. new.perDay, rev.perDay, new.delays,
    lapse.leechFails, maxTaken); the preset may be shared by other decks."""
    return _bridge(ctx, "get_deck_options", deck=deck)


@tool(SET)
def set_deck_options(ctx: Context, deck: str, changes: dict[str, Any]) -> dict[str, Any]:
    """Change the options preset a deck uses: {dotted key: value}, e.g. {"new.perDay": 10}. Every deck
    sharing the preset changes with it."""
    return _bridge(ctx, "set_deck_options", deck=deck, changes=changes)


@tool(READ)
def get_preferences(ctx: Context) -> dict[str, Any]:
    """Every collection preference (the Preferences window's scheduling, reviewing, editing and backup
    settings) by Anki's own names, e.g. "scheduling.rollover" (the hour the next day starts),
    "scheduling.learn_ahead_secs", "editing.default_search_text", "backups.minimum_interval_mins"."""
    return _bridge(ctx, "get_preferences")


@tool(SET)
def set_preferences(ctx: Context, changes: dict[str, Any]) -> dict[str, Any]:
    """Change preferences: {name: value} with the names get_preferences returns (only those given change);
    returns every preference after the change."""
    return _bridge(ctx, "set_preferences", changes=changes)


def main() -> None:
    mcp.run("stdio")


if __name__ == "__main__":
    main()
