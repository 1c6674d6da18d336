"""Anki MCP server. Every tool is a call to the bridge inside the running Anki (ANKI_BRIDGE_URL),
so its actions are real Anki operations: visible in the GUI, undoable, and seen by the probe.

Searches use Anki's own search syntax (e.g. `tag:quote`, `deck:Default`, `"front:*quick*"`).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

mcp = MCPServer("anki", instructions="Tools for the running Anki desktop app: decks, notes, note types, tags, "
                                     "scheduling, search, find-and-replace, undo and preferences.")


def _bridge(method: str, **params: Any) -> str:
    url = os.environ.get("ANKI_BRIDGE_URL", "http://127.0.0.1:8765")
    body = json.dumps({"method": method, "params": {k: v for k, v in params.items() if v is not None}}).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=40) as resp:
            reply = json.loads(resp.read())
    except (urllib.error.URLError, OSError) as e:
        raise ToolError(f"Anki is not reachable ({e}); is it running?") from None
    if "error" in reply:
        raise ToolError(reply["error"])
    return json.dumps(reply.get("result"), ensure_ascii=False)


def tool(fn):
    return mcp.tool(structured_output=False)(fn)


@tool
def list_decks() -> str:
    """List all decks with their ids and card counts."""
    return _bridge("list_decks")


@tool
def create_deck(name: str) -> str:
    """Create a deck. Use '::' for subdecks, e.g. 'Languages::French'."""
    return _bridge("create_deck", name=name)


@tool
def delete_deck(name: str) -> str:
    """Delete a deck and the cards in it."""
    return _bridge("delete_deck", name=name)


@tool
def rename_deck(name: str, new_name: str) -> str:
    """Rename a deck."""
    return _bridge("rename_deck", name=name, new_name=new_name)


@tool
def add_note(fields: dict[str, str], note_type: str = "Basic", deck: str = "Default", tags: list[str] | None = None,
             create_deck: bool = False) -> str:
    """Add a note. `fields` maps field names to HTML content, e.g. {"Front": "<b>Q</b>", "Back": "A"}.
    Note types include 'Basic' (Front/Back) and 'Cloze' (Text, with {{c1::...}} deletions)."""
    return _bridge("add_note", fields=fields, note_type=note_type, deck=deck, tags=tags or [], create_deck=create_deck)


@tool
def update_note(note_id: int, fields: dict[str, str] | None = None, tags: list[str] | None = None) -> str:
    """Change some fields and/or replace the tags of a note."""
    return _bridge("update_note", note_id=note_id, fields=fields, tags=tags)


@tool
def delete_notes(query: str) -> str:
    """Delete every note matching an Anki search (and its cards)."""
    return _bridge("delete_notes", query=query)


@tool
def find_notes(query: str, limit: int = 100) -> str:
    """Find notes with an Anki search; returns ids, note type, fields, tags, deck and card ids."""
    return _bridge("find_notes", query=query, limit=limit)


@tool
def store_media_file(path: str) -> str:
    """Copy an image or sound file (e.g. ~/Pictures/cat.png) into the collection's media folder; returns the
    stored file name, to use in a field as <img src="NAME">."""
    return _bridge("store_media_file", path=path)


@tool
def move_cards(query: str, deck: str) -> str:
    """Move every card matching a search into a deck (created if missing)."""
    return _bridge("move_cards", query=query, deck=deck)


@tool
def add_tags(query: str, tags: list[str]) -> str:
    """Add tags to every note matching a search."""
    return _bridge("add_tags", query=query, tags=tags)


@tool
def remove_tags(query: str, tags: list[str]) -> str:
    """Remove tags from every note matching a search."""
    return _bridge("remove_tags", query=query, tags=tags)


@tool
def clear_unused_tags() -> str:
    """Remove tags that no note uses from the tag list."""
    return _bridge("clear_unused_tags")


@tool
def suspend_cards(query: str) -> str:
    """Suspend every card matching a search."""
    return _bridge("suspend_cards", query=query)


@tool
def unsuspend_cards(query: str) -> str:
    """Unsuspend every card matching a search."""
    return _bridge("unsuspend_cards", query=query)


@tool
def set_flag(query: str, flag: int) -> str:
    """Flag every card matching a search: 0 none, 1 red, 2 orange, 3 green, 4 blue, 5 pink, 6 turquoise, 7 purple."""
    return _bridge("set_flag", query=query, flag=flag)


@tool
def set_due_date(query: str, days: str) -> str:
    """Set the due date of matching cards: '0' today, '5' in five days, '5-7' a range, '5!' also sets the interval."""
    return _bridge("set_due_date", query=query, days=days)


@tool
def find_and_replace(search: str, replacement: str, query: str = "", field: str | None = None, regex: bool = False,
                     match_case: bool = False) -> str:
    """Find and replace text in the notes matching `query` (all notes when empty), in one field or all fields."""
    return _bridge("find_and_replace", search=search, replacement=replacement, query=query, field=field, regex=regex,
                   match_case=match_case)


@tool
def undo() -> str:
    """Undo the last operation (as Edit > Undo)."""
    return _bridge("undo")


@tool
def list_note_types() -> str:
    """List note types with their fields and card templates."""
    return _bridge("list_note_types")


@tool
def get_note_type(name: str) -> str:
    """A note type's fields, CSS and card templates (front and back HTML)."""
    return _bridge("get_note_type", name=name)


@tool
def create_note_type(name: str, copy_from: str | None = None, fields: list[str] | None = None,
                     templates: list[dict[str, str]] | None = None, css: str | None = None) -> str:
    """Create a note type, either as a copy of an existing one (`copy_from`, e.g. 'Basic') or from `fields` and
    `templates` ([{"name": "Card 1", "front": "{{Question}}", "back": "{{FrontSide}}<hr id=answer>{{Answer}}"}])."""
    return _bridge("create_note_type", name=name, copy_from=copy_from, fields=fields, templates=templates, css=css)


@tool
def add_field(note_type: str, field: str, position: int | None = None) -> str:
    """Add a field to a note type; `position` is 1-based (default: last)."""
    return _bridge("add_field", note_type=note_type, field=field, position=position)


@tool
def set_card_template(note_type: str, front: str | None = None, back: str | None = None, template: str | None = None,
                      css: str | None = None) -> str:
    """Change a card template's front and/or back HTML (default: the first template), and optionally the CSS."""
    return _bridge("set_card_template", note_type=note_type, template=template, front=front, back=back, css=css)


@tool
def get_preferences() -> str:
    """Current preferences: default_search_text, learn_ahead_mins, rollover (next day starts at, hour),
    backup_interval_mins."""
    return _bridge("get_preferences")


@tool
def set_preferences(default_search_text: str | None = None, learn_ahead_mins: int | None = None,
                    rollover: int | None = None, backup_interval_mins: int | None = None) -> str:
    """Change preferences (only the ones given)."""
    return _bridge("set_preferences", default_search_text=default_search_text, learn_ahead_mins=learn_ahead_mins,
                   rollover=rollover, backup_interval_mins=backup_interval_mins)


def main() -> None:
    mcp.run("stdio")


if __name__ == "__main__":
    main()
