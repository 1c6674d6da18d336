"""The file editor tool (str_replace_based_edit_tool): view, create, str_replace, insert, undo_edit."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from gateway.base import ToolProvider, ToolResult, ToolSpec
from gateway.modes import EDIT_TOOL, Kind
from gateway.tools.bash import SHELL_ANNOTATIONS, truncate

SNIPPET = 4


class EditArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: Literal["view", "create", "str_replace", "insert", "undo_edit"]
    path: str
    file_text: str | None = None
    old_str: str | None = None
    new_str: str | None = None
    insert_line: int | None = None
    insert_text: str | None = None
    view_range: tuple[int, int] | None = None


def numbered(text: str, start: int = 1) -> str:
    return "\n".join(f"{i:6}\t{line}" for i, line in enumerate(text.split("\n"), start))


class EditTool(ToolProvider):
    name = "edit"

    def __init__(self, env):
        self.env = env
        self._history: dict[str, list[str]] = {}

    def specs(self) -> list[ToolSpec]:
        schema = EditArgs.model_json_schema()
        schema.pop("title", None)
        return [ToolSpec(name=EDIT_TOOL, kind=Kind.EDIT, input_schema=schema, annotations=SHELL_ANNOTATIONS, description=(
            "View, create and edit files inside the environment. Paths must be absolute. "
            "Commands: view (file with line numbers, or a directory two levels deep; view_range [start, end], end -1 "
            "for the end), create (file_text), str_replace (old_str must occur exactly once), insert "
            "(insert_text after line insert_line, 0 for the top), undo_edit (revert the last edit of path)."))]

    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        try:
            a = EditArgs.model_validate(args)
            if not a.path.startswith("/"):
                raise ValueError(f"path must be absolute, got '{a.path}'")
            return await getattr(self, f"_{a.command}")(a)  # command is a validated Literal
        except (ValidationError, ValueError) as e:
            return ToolResult.error(f"edit: {e}")
        except OSError as e:
            return ToolResult.error(f"edit: {e.strerror or e}: {a.path}")

    async def _view(self, a: EditArgs) -> ToolResult:
        kind = await self.env.agent_files.path_kind(a.path)
        if kind is None:
            raise ValueError(f"no such file or directory: {a.path}")
        if kind == "dir":
            if a.view_range:
                raise ValueError("view_range applies to files, not directories")
            listing = "\n".join(await self.env.agent_files.list_dir(a.path))
            return ToolResult.text(f"Files and directories up to 2 levels deep in {a.path}:\n{listing}")
        text = await self.env.agent_files.read_text(a.path)
        lines = text.split("\n")
        start = 1
        if a.view_range:
            start, end = a.view_range
            end = len(lines) if end == -1 else end
            if not (1 <= start <= len(lines)) or end < start or end > len(lines):
                raise ValueError(f"view_range {list(a.view_range)} is outside the file's {len(lines)} lines")
            lines = lines[start - 1:end]
        return ToolResult.text(truncate(numbered("\n".join(lines), start)))

    async def _create(self, a: EditArgs) -> ToolResult:
        if a.file_text is None:
            raise ValueError("create needs file_text")
        if await self.env.agent_files.path_kind(a.path) == "file":
            self._history.setdefault(a.path, []).append(await self.env.agent_files.read_text(a.path))
        await self.env.agent_files.write_text(a.path, a.file_text)
        return ToolResult.text(f"File created: {a.path}")

    async def _file(self, path: str) -> str:
        if await self.env.agent_files.path_kind(path) != "file":
            raise ValueError(f"not a file: {path}")
        return await self.env.agent_files.read_text(path)

    async def _str_replace(self, a: EditArgs) -> ToolResult:
        if a.old_str is None:
            raise ValueError("str_replace needs old_str")
        text = await self._file(a.path)
        count = text.count(a.old_str)
        if count != 1:
            raise ValueError(f"old_str occurs {count} times in {a.path}; it must occur exactly once")
        new = text.replace(a.old_str, a.new_str or "")
        self._history.setdefault(a.path, []).append(text)
        await self.env.agent_files.write_text(a.path, new)
        line = text[: text.index(a.old_str)].count("\n") + 1
        return ToolResult.text(f"Edited {a.path}. Around the change:\n{self._snippet(new, line)}")

    async def _insert(self, a: EditArgs) -> ToolResult:
        body = a.insert_text if a.insert_text is not None else a.new_str
        if a.insert_line is None or body is None:
            raise ValueError("insert needs insert_line and insert_text")
        text = await self._file(a.path)
        lines = text.split("\n")
        if not 0 <= a.insert_line <= len(lines):
            raise ValueError(f"insert_line {a.insert_line} is outside 0..{len(lines)}")
        new = "\n".join(lines[:a.insert_line] + body.split("\n") + lines[a.insert_line:])
        self._history.setdefault(a.path, []).append(text)
        await self.env.agent_files.write_text(a.path, new)
        return ToolResult.text(f"Inserted into {a.path}:\n{self._snippet(new, a.insert_line + 1)}")

    async def _undo_edit(self, a: EditArgs) -> ToolResult:
        stack = self._history.get(a.path)
        if not stack:
            raise ValueError(f"no edit of {a.path} to undo")
        await self.env.agent_files.write_text(a.path, stack.pop())
        return ToolResult.text(f"Last edit of {a.path} undone.")

    @staticmethod
    def _snippet(text: str, line: int) -> str:
        lines = text.split("\n")
        lo = max(0, line - 1 - SNIPPET)
        return numbered("\n".join(lines[lo: line + SNIPPET]), lo + 1)
