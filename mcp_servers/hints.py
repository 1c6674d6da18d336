"""MCP tool annotations (hints to clients about a tool's effect), named by what a tool does to the app.

MCP's defaults assume the worst (destructive, not idempotent, open world); our tools act on one local
app, so every hint is given."""

from mcp.types import ToolAnnotations

READ = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
# adds something new (a deck, a note, a scene); calling it twice adds two
ADD = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)
# starts something (a recording); a second call finds it started
START = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False)
# overwrites a value (a name, a setting); the same call twice leaves the same state
SET = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False)
# deletes; the same call twice deletes nothing more
REMOVE = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False)
# changes state in a way a repeat changes again (undo, a hotkey)
ACT = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False)
