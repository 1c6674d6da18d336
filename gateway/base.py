"""Tool results, tool specs and the provider interface every tool source implements."""

from __future__ import annotations

import abc
import base64
from dataclasses import dataclass, field
from typing import Any

from gateway.modes import Kind


@dataclass(frozen=True)
class ToolResult:
    """MCP-shaped content items ({"type": "text"|"image", ...}), the error flag, and the structured result
    of a tool that declares an output schema (MCP's structuredContent), passed through unchanged."""

    content: tuple[dict[str, Any], ...] = ()
    is_error: bool = False
    structured: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None  # for the call log only (how the computer tool settled), never sent

    @classmethod
    def text(cls, text: str, image: Any = None) -> ToolResult:
        """`image`: PNG bytes, or a capture (gateway.screen.Frame) encoded only when someone reads it."""
        items = [{"type": "text", "text": text}] if text else []
        if image is not None:
            items.append(image_item(image))
        return cls(tuple(items))

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(({"type": "text", "text": message},), is_error=True)

    @property
    def texts(self) -> list[str]:
        return [c["text"] for c in self.content if c.get("type") == "text"]

    @property
    def images(self) -> list[dict[str, Any]]:
        return [c for c in self.content if c.get("type") == "image"]

    def summary(self, limit: int = 300) -> str:
        text = " ".join(self.texts)
        text = text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more chars]"
        n_img = len(self.images)
        return text + (f" [+{n_img} image{'s' if n_img > 1 else ''}]" if n_img else "")


def image_item(image: Any) -> dict[str, Any]:
    if isinstance(image, bytes):
        return {"type": "image", "data": base64.b64encode(image).decode(), "mimeType": "image/png"}
    return {"type": "image", "frame": image, "mimeType": "image/png"}


def image_data(item: dict[str, Any]) -> str:
    """An image item's base64 data; a capture is encoded here, on first use (an oracle never asks)."""
    data = item.get("data")
    return data if data is not None else item["frame"].b64()


class ToolError(Exception):
    """A recoverable problem the agent should see as an isError result (bad arguments, ...)."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the gateway lists it. `annotations` are MCP's tool annotations (readOnlyHint,
    destructiveHint, idempotentHint, openWorldHint, title) and `output_schema` its outputSchema, both
    passed through to the gateway's clients; `display` is the computer tool's screen size in the
    coordinates the model uses (width, height)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    kind: Kind
    annotations: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    display: tuple[int, int] | None = None


class ToolProvider(abc.ABC):
    """A source of tools: the computer, bash, edit tools, or one app MCP server."""

    name: str

    async def start(self) -> None:
        """Connect/prepare; called once per trial before specs() is read."""

    async def close(self) -> None:
        """Release everything started in start()."""

    @abc.abstractmethod
    def specs(self) -> list[ToolSpec]:
        ...

    @abc.abstractmethod
    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        """Run one tool; recoverable problems come back as ToolResult.error."""
