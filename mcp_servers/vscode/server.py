"""VS Code MCP server. Every tool is a call to the bridge the probe extension serves inside the running VS Code
(VSCODE_BRIDGE_URL), which acts through VS Code's own API (editors, workspace edits, settings, terminals):
visible in the window, and seen by the probe like the same action by hand. Structured results; a bridge
error is an `isError` result. Paths are relative to the open workspace folder unless absolute.

There is no "run any command" or "evaluate code" tool: code run in the extension host could reach the probe
that verifies the run (apps/vscode/NOTES.md compares public VS Code MCP servers' tools).
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from mcp_servers.bridge import bridged_server
from mcp_servers.hints import ACT, ADD, READ, REMOVE, SET

mcp, tool, call = bridged_server(
    "vscode", "VS Code", "VSCODE_BRIDGE_URL", "VSCODE_BRIDGE_TOKEN",
    instructions="Tools for the running VS Code window: the workspace's files (list, open, read, write, create, "
                 "rename, delete, replace text, save), editors (cursor, side-by-side, compare), settings at user or "
                 "workspace scope (font size, tab size, auto save, colour theme ...), the integrated terminal, folding, "
                 "breakpoints and debug sessions (launch.json configurations), the folder open in the window, git (status, commit, branch), errors "
                 "(problems), Rename Symbol, and extensions installed from .vsix packages. "
                 "Paths are relative to the open workspace folder.")

Path = Annotated[str, Field(description="a path relative to the workspace folder (or absolute)")]
Scope = Literal["user", "workspace"]


@tool(READ)
def get_state(ctx: Context) -> dict[str, Any]:
    """The window: the workspace folder, open tabs (path, column, preview), visible editors, the active editor's
    cursor and visible lines, unsaved files, the watched settings at user and workspace scope, the terminals,
    breakpoints and the debug session, and the git repository."""
    return call(ctx, "state")


@tool(READ)
def list_files(ctx: Context, folder: Path = ".") -> dict[str, Any]:
    """Files and folders under a folder of the workspace (folders end in /)."""
    return call(ctx, "list_files", folder=folder)


@tool(READ)
def read_file(ctx: Context, path: Path) -> dict[str, Any]:
    """A file's text as VS Code has it (unsaved edits included) and whether it is unsaved."""
    return call(ctx, "read_file", path=path)


@tool(ACT)
def open_file(ctx: Context, path: Path, line: Annotated[int | None, Field(ge=1)] = None,
              beside: Annotated[bool, Field(description="open in a new editor group to the right (split view)")] = False
              ) -> dict[str, Any]:
    """Open a file in an editor (as a kept tab, not a preview), optionally at a line."""
    return call(ctx, "open_file", path=path, line=line, beside=beside)


@tool(ACT)
def set_cursor(ctx: Context, path: Path, line: Annotated[int, Field(ge=1)],
               character: Annotated[int, Field(ge=1)] = 1) -> dict[str, Any]:
    """Put the cursor at a line and column (1-based) of a file, opening it if needed."""
    return call(ctx, "set_cursor", path=path, line=line, character=character)


@tool(SET)
def replace_text(ctx: Context, path: Path, find: str, replace: str, whole_word: bool = False,
                 save: bool = True) -> dict[str, Any]:
    """Replace every occurrence of `find` (plain text) in a file, as Find and Replace's Replace All does, then
    save it unless told not to."""
    return call(ctx, "replace_text", path=path, find=find, replace=replace, whole_word=whole_word, save=save)


@tool(SET)
def write_file(ctx: Context, path: Path, text: str, save: bool = True) -> dict[str, Any]:
    """Replace a file's whole text in its editor (creating the file if needed), then save it unless told not to."""
    return call(ctx, "write_file", path=path, text=text, save=save)


@tool(SET)
def save_file(ctx: Context, path: Path) -> dict[str, Any]:
    """Save a file's unsaved edits."""
    return call(ctx, "save_file", path=path)


@tool(ADD)
def create_file(ctx: Context, path: Path, text: str = "") -> dict[str, Any]:
    """Create a new file (and any missing folders on its path), as the Explorer's New File does."""
    return call(ctx, "create_file", path=path, text=text)


@tool(ADD)
def create_folder(ctx: Context, path: Path) -> dict[str, Any]:
    """Create a folder (and any missing parents)."""
    return call(ctx, "create_folder", path=path)


@tool(SET)
def rename_file(ctx: Context, path: Path, new_path: Path) -> dict[str, Any]:
    """Rename or move a file or folder, as the Explorer's Rename does."""
    return call(ctx, "rename_file", path=path, new_path=new_path)


@tool(REMOVE)
def delete_file(ctx: Context, path: Path) -> dict[str, Any]:
    """Delete a file or folder (with its contents)."""
    return call(ctx, "delete_file", path=path)


@tool(READ)
def get_settings(ctx: Context) -> dict[str, Any]:
    """The watched settings (theme, font size, tab size, auto save, blame decorations ...) at user scope,
    workspace scope (.vscode/settings.json) and in effect."""
    return call(ctx, "get_settings")


@tool(SET)
def set_setting(ctx: Context, key: Annotated[str, Field(description="a setting id, e.g. editor.fontSize")],
                value: Any, scope: Scope = "user") -> dict[str, Any]:
    """Set a setting at user scope or at workspace scope (written to the workspace's .vscode/settings.json).
    A null value removes it from that scope."""
    return call(ctx, "set_setting", key=key, value=value, scope=scope)


@tool(READ)
def list_themes(ctx: Context) -> dict[str, Any]:
    """The colour themes the installed extensions offer, and the current one."""
    return call(ctx, "list_themes")


@tool(SET)
def set_theme(ctx: Context, theme: Annotated[str, Field(description="a theme's name as list_themes gives it")]
              ) -> dict[str, Any]:
    """Switch the colour theme (user setting workbench.colorTheme)."""
    return call(ctx, "set_theme", theme=theme)


@tool(ACT)
def run_in_terminal(ctx: Context, command: str, cwd: Path | None = None,
                    timeout: Annotated[float, Field(gt=0, le=120)] = 30) -> dict[str, Any]:
    """Open a new integrated terminal (in `cwd`, the workspace folder by default), run a command in it and
    wait for it to finish: its exit code."""
    return call(ctx, "run_in_terminal", command=command, cwd=cwd, timeout=timeout)


@tool(ACT)
def compare_files(ctx: Context, left: Path, right: Path) -> dict[str, Any]:
    """Open two files side by side in a comparison (diff) editor, left as the original."""
    return call(ctx, "compare_files", left=left, right=right)


@tool(READ)
def list_extensions(ctx: Context) -> dict[str, Any]:
    """The extensions installed for the user (id, version, name); built-in ones are not listed."""
    return call(ctx, "list_extensions")


@tool(ADD)
def install_extension(ctx: Context, vsix: Annotated[str, Field(description="path of an extension package (.vsix)")]
                      ) -> dict[str, Any]:
    """Install an extension from a package file, as the Extensions view's "Install from VSIX..." does (the
    gallery cannot be reached): the installed extensions afterwards."""
    return call(ctx, "install_extension", vsix=vsix)


@tool(READ)
def get_problems(ctx: Context, path: Path | None = None) -> dict[str, Any]:
    """Errors and warnings VS Code reports (its language features): for one file (count and messages with
    lines), or for every workspace file that has any."""
    return call(ctx, "get_problems", path=path)


@tool(SET)
def rename_symbol(ctx: Context, path: Path, line: Annotated[int, Field(ge=1)], character: Annotated[int, Field(ge=1)],
                  new_name: str, save: bool = True) -> dict[str, Any]:
    """Rename the symbol at a position everywhere it is used (VS Code's Rename Symbol, F2): the files changed."""
    return call(ctx, "rename_symbol", path=path, line=line, character=character, new_name=new_name, save=save)


@tool(ACT)
def fold(ctx: Context, path: Path, action: Literal["fold_all", "unfold_all", "fold", "unfold"] = "fold_all",
         line: Annotated[int | None, Field(ge=1, description="fold/unfold: the block starting on this line")] = None
         ) -> dict[str, Any]:
    """Fold or unfold code blocks in a file's editor (all of them, or the block at a line): the lines left
    visible, as [first, last] runs."""
    return call(ctx, "fold", path=path, action=action, line=line)


@tool(ADD)
def add_breakpoint(ctx: Context, path: Path, line: Annotated[int, Field(ge=1)],
                   condition: Annotated[str | None, Field(description="an expression: break only when true")] = None
                   ) -> dict[str, Any]:
    """Set a breakpoint on a line (no debug session needed): all breakpoints."""
    return call(ctx, "add_breakpoint", path=path, line=line, condition=condition)


@tool(REMOVE)
def remove_breakpoint(ctx: Context, path: Path, line: Annotated[int, Field(ge=1)]) -> dict[str, Any]:
    """Remove the breakpoint on a line: all breakpoints left."""
    return call(ctx, "remove_breakpoint", path=path, line=line)


@tool(ACT)
def start_debugging(ctx: Context, configuration: Annotated[str, Field(
        description="a launch configuration's name from the workspace's .vscode/launch.json")],
                    wait: Annotated[float, Field(ge=0, le=60, description="seconds to wait for a pause or the end")] = 10
                    ) -> dict[str, Any]:
    """Start a debug session with a launch configuration and wait until the program pauses (a breakpoint) or
    ends: the breakpoints, the session and that outcome (paused, ended, running)."""
    return call(ctx, "start_debugging", configuration=configuration, wait=wait)


@tool(ACT)
def continue_debugging(ctx: Context, wait: Annotated[float, Field(ge=0, le=60, description="seconds to wait for a "
                                                                   "pause or the end")] = 10) -> dict[str, Any]:
    """Continue the paused program (Run > Continue) and wait until it pauses again or ends: the breakpoints, the
    session and that outcome (paused, ended, running)."""
    return call(ctx, "continue_debugging", wait=wait)


@tool(ACT)
def open_folder(ctx: Context, path: Annotated[str, Field(description="the folder to open (relative to the "
                                                         "workspace, absolute, or from ~)")]) -> dict[str, Any]:
    """Open a folder in this window (File > Open Folder), which becomes the workspace; returns once VS Code
    has reopened on it."""
    opening = call(ctx, "open_folder", path=str(path))["opening"]
    # the window reloads: a new extension host takes the bridge over from the one that answered
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.5)
        try:
            state = call(ctx, "state")
        except ToolError:
            continue
        if state.get("workspace") == opening:
            return {"workspace": opening}
    raise ToolError(f"VS Code did not reopen on {opening} within 60 s")


@tool(ACT)
def stop_debugging(ctx: Context) -> dict[str, Any]:
    """Stop the active debug session."""
    return call(ctx, "stop_debugging")


@tool(READ)
def git_status(ctx: Context) -> dict[str, Any]:
    """The workspace's git repository: branch, HEAD commit and message, uncommitted changes, local branches."""
    return call(ctx, "git_status")


@tool(ADD)
def git_commit(ctx: Context, message: str,
               all: Annotated[bool, Field(description="stage every change first (git commit -a)")] = True
               ) -> dict[str, Any]:
    """Commit through VS Code's git (as the Source Control view does): the repository afterwards."""
    return call(ctx, "git_commit", message=message, all=all)


@tool(ACT)
def git_checkout(ctx: Context, branch: str) -> dict[str, Any]:
    """Switch the workspace to a local branch (uncommitted changes carry over where git allows)."""
    return call(ctx, "git_checkout", branch=branch)


@tool(REMOVE)
def close_all_editors(ctx: Context) -> dict[str, Any]:
    """Close every editor tab (unsaved files keep their edits and ask nothing)."""
    return call(ctx, "close_all_editors")


def main() -> None:
    mcp.run("stdio")


if __name__ == "__main__":
    main()
