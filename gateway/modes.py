"""Modes, tool kinds and the built-in tool names: defined here once, used everywhere else.

A mode is only a filter over tool kinds (gateway.registry.ToolFilter); nothing else branches on it."""

from __future__ import annotations

from enum import StrEnum


class Mode(StrEnum):
    GUI = "gui"
    MCP = "mcp"
    HYBRID = "hybrid"


class Kind(StrEnum):
    """What kind of tool a tool is: the unit modes and ablations filter on."""

    GUI = "gui"
    BASH = "bash"
    EDIT = "edit"
    MCP = "mcp"


MODES: tuple[Mode, ...] = tuple(Mode)
KINDS: tuple[Kind, ...] = tuple(Kind)
MODE_KINDS: dict[Mode, frozenset[Kind]] = {
    Mode.GUI: frozenset({Kind.GUI, Kind.BASH, Kind.EDIT}),
    Mode.MCP: frozenset({Kind.MCP, Kind.BASH, Kind.EDIT}),
    Mode.HYBRID: frozenset(Kind),
}
SHELL_KINDS = frozenset({Kind.BASH, Kind.EDIT})  # what --no-bash drops

# the built-in tools' names, as Anthropic's computer-use tool types name them
COMPUTER_TOOL = "computer"
BASH_TOOL = "bash"
EDIT_TOOL = "str_replace_based_edit_tool"
SHELL_TOOLS = (BASH_TOOL, EDIT_TOOL)

SEP = "__"  # an MCP tool's gateway name: <server>__<tool>


def mcp_tool_name(server: str, tool: str) -> str:
    return f"{server}{SEP}{tool}"
