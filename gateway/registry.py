"""The gateway's one tool registry: providers in, one filtered tool list out, O(1) routing, a call log.

A mode or an ablation is only a filter over tool kinds/names; nothing else knows about modes.
"""

from __future__ import annotations

import base64
import io
import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.base import ToolProvider, ToolResult, ToolSpec
from gateway.modes import MODE_KINDS, SEP, SHELL_KINDS, Mode


@dataclass(frozen=True)
class ToolFilter:
    mode: Mode = Mode.HYBRID
    no_bash: bool = False
    only: frozenset[str] | None = None  # --tools: explicit names (after the mode filter)

    def allows(self, spec: ToolSpec) -> bool:
        if spec.kind not in MODE_KINDS[self.mode]:
            return False
        if self.no_bash and spec.kind in SHELL_KINDS:
            return False
        return self.only is None or spec.name in self.only or spec.name.split(SEP, 1)[0] in self.only


class CallLog:
    """tool_calls.jsonl: every call with its arguments, a result summary and its duration; with a shots
    folder, a small JPEG of each screenshot a call returned (made off the call's path) for the report."""

    THUMB_WIDTH = 320

    def __init__(self, path: Path | None, shots: Path | None = None):
        self.path = path
        self._f = open(path, "a", buffering=1) if path else None
        self.shots = shots
        self._pool: ThreadPoolExecutor | None = None
        self.count = 0
        self.by_kind: dict[str, int] = {}
        self.by_tool: dict[str, int] = {}

    def write(self, tool: str, kind: str, args: dict[str, Any], result: ToolResult, started: float, duration: float) -> None:
        self.count += 1
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
        self.by_tool[tool] = self.by_tool.get(tool, 0) + 1
        if self._f:
            row = {"n": self.count, "ts": started, "tool": tool, "kind": kind, "args": args,
                   "is_error": result.is_error, "result": result.summary(), "images": len(result.images),
                   "duration_s": round(duration, 4), **(result.meta or {})}
            if self.shots is not None and result.images:
                row["shot"] = f"{self.shots.name}/{self.count:04d}.jpg"
                if self._pool is None:
                    self.shots.mkdir(parents=True, exist_ok=True)
                    self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="thumbs")
                self._pool.submit(_thumbnail, result.images[-1], self.shots / f"{self.count:04d}.jpg",
                                  self.THUMB_WIDTH)
            self._f.write(json.dumps(row, default=str) + "\n")

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._f:
            self._f.close()
            self._f = None


def _thumbnail(item: dict[str, Any], out: Path, width: int) -> None:
    """Straight from a capture's pixels where there is one; an app server's image is decoded first."""
    frame = item.get("frame")
    if frame is not None:
        out.write_bytes(frame.thumbnail_jpeg(width))
        return
    from PIL import Image

    img = Image.open(io.BytesIO(base64.b64decode(item["data"]))).convert("RGB")
    img.thumbnail((width, width * img.height // max(1, img.width)))
    img.save(out, "JPEG", quality=70)


class ToolRegistry:
    def __init__(self, providers: list[ToolProvider], tool_filter: ToolFilter, call_log: CallLog | None = None):
        self.providers = providers
        self.filter = tool_filter
        self.log = call_log or CallLog(None)
        self._routes: dict[str, tuple[ToolProvider, ToolSpec]] = {}
        self.started: list[ToolProvider] = []

    async def start(self) -> None:
        for p in self.providers:
            await p.start()
            self.started.append(p)
            for spec in p.specs():
                if self.filter.allows(spec):
                    if spec.name in self._routes:
                        raise ValueError(f"two providers offer a tool named '{spec.name}'")
                    self._routes[spec.name] = (p, spec)
        if self.filter.only:
            unknown = {n for n in self.filter.only if n not in self._routes
                       and not any(k.startswith(n + SEP) for k in self._routes)}
            if unknown:
                raise ValueError(f"--tools names no available tool: {', '.join(sorted(unknown))} "
                                 f"(available in this mode: {', '.join(self._routes)})")

    async def close(self) -> None:
        errors = []
        for p in reversed(self.started):
            try:
                await p.close()
            except Exception as e:  # keep closing the others; report after
                errors.append(f"{p.name}: {e!r}")
        self.started.clear()
        self.log.close()
        if errors:
            raise RuntimeError("closing tool providers failed: " + "; ".join(errors))

    async def call_unlisted(self, name: str, args: dict[str, Any]) -> ToolResult:
        """Call any started provider's tool, whatever the mode allows, off the agent's call log
        (a task's set-up steps, run before the agent starts)."""
        for p in self.started:
            if any(spec.name == name for spec in p.specs()):
                return await p.call(name, args)
        return ToolResult.error(f"no provider offers '{name}'")

    def specs(self) -> list[ToolSpec]:
        return [spec for _, spec in self._routes.values()]

    def kind_of(self, name: str) -> str | None:
        route = self._routes.get(name)
        return route[1].kind if route else None

    async def call(self, name: str, args: dict[str, Any] | None) -> ToolResult:
        started, t0 = time.time(), time.perf_counter()
        route = self._routes.get(name)
        if route is None:
            result = ToolResult.error(f"unknown tool '{name}' (available: {', '.join(self._routes)})")
            kind = "unknown"
        else:
            provider, spec = route
            kind = spec.kind
            try:
                result = await provider.call(name, args or {})
            except Exception as e:  # a crashing provider is the agent's failed call, recorded, not a dead trial
                result = ToolResult.error(f"{name} failed: {type(e).__name__}: {e}")
        self.log.write(name, kind, args or {}, result, started, time.perf_counter() - t0)
        return result
