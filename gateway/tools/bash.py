"""The bash tool: one persistent shell per trial inside the environment (its HOME, DISPLAY, marker).

Each call has a timeout; on timeout the shell is killed and restarted and the agent is told so.
Long output is truncated with a note saying how much was cut.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from gateway.base import ToolProvider, ToolResult, ToolSpec
from gateway.modes import BASH_TOOL, Kind

MAX_OUTPUT = 16_000


class BashArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str | None = None
    restart: bool = False


def truncate(text: str, limit: int = MAX_OUTPUT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[output truncated: {len(text) - limit} more characters not shown]"


# a shell can do anything the environment's user can
SHELL_ANNOTATIONS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False}


class BashTool(ToolProvider):
    name = BASH_TOOL

    def __init__(self, env, timeout: float = 120.0):
        self.env, self.timeout = env, timeout
        self._proc: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()

    def specs(self) -> list[ToolSpec]:
        schema = BashArgs.model_json_schema()
        schema.pop("title", None)
        return [ToolSpec(name=BASH_TOOL, kind=Kind.BASH, input_schema=schema, annotations=SHELL_ANNOTATIONS, description=(
            "Run a command in a persistent bash shell inside the desktop environment (state such as the "
            f"working directory persists between calls). Calls time out after {self.timeout:.0f}s; "
            "`restart: true` starts a fresh shell."))]

    async def _start(self) -> None:
        self._proc = await self.env.spawn(["bash", "--noprofile", "--norc"], stdin=asyncio.subprocess.PIPE,
                                          stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, agent=True)

    async def _kill(self) -> None:
        if self._proc:
            await self.env.kill_group(self._proc)
        self._proc = None

    async def close(self) -> None:
        await self._kill()

    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        try:
            a = BashArgs.model_validate(args)
        except ValidationError as e:
            return ToolResult.error(f"bash: {e}")
        async with self._lock:
            if a.restart:
                await self._kill()
                await self._start()
                return ToolResult.text("shell restarted")
            if not a.command:
                return ToolResult.error("bash: give a command (or restart: true)")
            if self._proc is None or self._proc.returncode is not None:
                await self._start()
            return await self._run(a.command)

    async def _run(self, command: str) -> ToolResult:
        sentinel = f"__mcpworld_done_{uuid.uuid4().hex}__"
        proc = self._proc
        # stdin from /dev/null: a command that reads stdin must not swallow the commands that follow
        proc.stdin.write(f"{{ {command}\n}} < /dev/null; echo \"{sentinel}$?\"; echo \"{sentinel}\" >&2\n".encode())
        await proc.stdin.drain()
        try:
            out, code = await asyncio.wait_for(_read_until(proc.stdout, sentinel, with_code=True), self.timeout)
            err, _ = await asyncio.wait_for(_read_until(proc.stderr, sentinel), 5)
        except asyncio.TimeoutError:
            await self._kill()
            return ToolResult.error(f"bash: the command did not finish within {self.timeout:.0f}s; "
                                    "the shell was restarted")
        except (asyncio.IncompleteReadError, ConnectionError):  # the shell ended: say how, for whoever reads the log
            try:
                status = await asyncio.wait_for(proc.wait(), 5)
                err = (await asyncio.wait_for(proc.stderr.read(), 5)).decode(errors="replace").strip()
            except (asyncio.TimeoutError, ConnectionError):
                status, err = None, ""
            await self._kill()
            return ToolResult.error(f"bash: the shell exited (status {status})"
                                    + (f": {truncate(err, 2000)}" if err else "") + "; a new one starts with the next call")
        text = out
        if err.strip():
            text += ("\n" if text else "") + f"[stderr]\n{err}"
        if code != 0:
            text += f"\n[exit code {code}]"
        return ToolResult(({"type": "text", "text": truncate(text) or "(no output)"},), is_error=False)


async def _read_until(stream: asyncio.StreamReader, sentinel: str, with_code: bool = False) -> tuple[str, int]:
    chunks = []
    while True:
        line = await stream.readline()
        if not line:
            raise asyncio.IncompleteReadError(b"", None)
        text = line.decode(errors="replace")
        idx = text.find(sentinel)
        if idx >= 0:
            chunks.append(text[:idx])
            code = int(text[idx + len(sentinel):].strip() or 0) if with_code else 0
            return "".join(chunks), code
        chunks.append(text)
