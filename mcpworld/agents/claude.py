"""The reference agent: Claude through the `anthropic` SDK, with the gateway's tools.

GUI, bash and edit tools are declared with Anthropic's tool types for Claude 4.x models: the computer tool's
type and beta header by model (COMPUTER_VERSIONS; computer_20251124 with zoom enabled for the models Anthropic's
documentation lists for it, computer_20250124 otherwise), bash_20250124, text_editor_20250728 (whose name is the
gateway's own editor name); every MCP tool is an ordinary tool with its JSON schema.
Temperature 0 (sent in the body; the 2.x SDK has no argument for it); a step cap; token usage summed; old screenshots pruned from the history.
The SDK's retries (rate limits, server errors) and calls to a tool that is not there are counted in usage.
ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY are read by the SDK as usual (the key from another variable with api_key_env).
"""

from __future__ import annotations

import os
from typing import Any

from gateway.base import image_data
from gateway.modes import BASH_TOOL, COMPUTER_TOOL, EDIT_TOOL, Kind
from mcpworld.agents.base import KEEP_SCREENSHOTS, Agent, AgentContext, AgentError, StepCapReached, register
from mcpworld.agents.prompts import system_prompt

# model-name prefix -> (computer tool type, beta header), as Anthropic's computer use tool page lists them
# (checked against the documentation only, not the live API); any other model gets FALLBACK.
COMPUTER_20251124 = ("computer_20251124", "computer-use-2025-11-24")  # adds zoom
COMPUTER_VERSIONS = {
    "claude-opus-4-7": COMPUTER_20251124,
    "claude-opus-4-6": COMPUTER_20251124,
    "claude-sonnet-4-6": COMPUTER_20251124,
    "claude-opus-4-5": COMPUTER_20251124,
}
FALLBACK = ("computer_20250124", "computer-use-2025-01-24")  # Sonnet/Haiku 4.5, Opus 4.1, Sonnet/Opus 4, 3.7
ZOOM_TYPES = {"computer_20251124"}  # versions with the zoom action (enable_zoom in the declaration)
KEY_ENV = "ANTHROPIC_API_KEY"


def computer_version(model: str) -> tuple[str, str]:
    """(computer tool type, beta header) for a model id, dated or not."""
    return next((v for prefix, v in COMPUTER_VERSIONS.items() if model.startswith(prefix)), FALLBACK)


def api_tools(specs, computer_type: str = FALLBACK[0]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Tool declarations for the Messages API, and api name -> gateway name."""
    tools, names = [], {}
    for s in specs:
        if s.name == COMPUTER_TOOL:
            tools.append({"type": computer_type, "name": COMPUTER_TOOL, "display_number": 1,
                          "display_width_px": s.display[0], "display_height_px": s.display[1],
                          **({"enable_zoom": True} if computer_type in ZOOM_TYPES else {})})
            names[COMPUTER_TOOL] = s.name
        elif s.name == BASH_TOOL:
            tools.append({"type": "bash_20250124", "name": BASH_TOOL})
            names[BASH_TOOL] = s.name
        elif s.kind == Kind.EDIT:
            tools.append({"type": "text_editor_20250728", "name": EDIT_TOOL})  # the 4.x version; no undo_edit
            names[EDIT_TOOL] = s.name
        else:
            tools.append({"name": s.name, "description": s.description[:1024], "input_schema": s.input_schema})
            names[s.name] = s.name
    return tools, names


def to_blocks(result) -> list[dict[str, Any]]:
    blocks = []
    for c in result.content:
        if c.get("type") == "text":
            blocks.append({"type": "text", "text": c["text"]})
        elif c.get("type") == "image":
            blocks.append({"type": "image", "source": {"type": "base64", "media_type": c.get("mimeType", "image/png"),
                                                       "data": image_data(c)}})
        else:
            blocks.append({"type": "text", "text": str(c)})
    return blocks or [{"type": "text", "text": "(no output)"}]


def prune_screenshots(messages: list[dict[str, Any]], keep: int = KEEP_SCREENSHOTS) -> None:
    """Replace all but the newest `keep` images in tool results with a short note."""
    seen = 0
    for msg in reversed(messages):
        if msg["role"] != "user" or not isinstance(msg["content"], list):
            continue
        for block in msg["content"]:
            if block.get("type") != "tool_result" or not isinstance(block.get("content"), list):
                continue
            for i, item in enumerate(block["content"]):
                if item.get("type") == "image":
                    seen += 1
                    if seen > keep:
                        block["content"][i] = {"type": "text", "text": "[older screenshot removed]"}


@register
class ClaudeAgent(Agent):
    name = "claude"

    def __init__(self, model: str = "claude-sonnet-4-6", max_tokens: int = 4096, base_url: str | None = None,
                 api_key: str | None = None, temperature: float | None = 0.0, api_key_env: str = KEY_ENV,
                 request: dict[str, Any] | None = None, keep_screenshots: int = KEEP_SCREENSHOTS):
        """request: extra fields for every request (`--agent-option`); its max_tokens and temperature take
        the place of the arguments'. keep_screenshots: how many of the newest stay in the history."""
        request = dict(request or {})
        self.model, self.max_tokens = model, int(request.pop("max_tokens", max_tokens))
        self.temperature = request.pop("temperature", temperature)
        self.base_url, self.api_key, self.api_key_env, self.request = base_url, api_key, api_key_env, request
        self.keep_screenshots = keep_screenshots

    def check(self) -> None:
        if self.api_key or os.environ.get(self.api_key_env):
            return
        if self.api_key_env == KEY_ENV and os.environ.get("ANTHROPIC_AUTH_TOKEN"):  # the SDK's other credential
            return
        raise AgentError(f"--agent claude reads its API key from ${self.api_key_env}, which is not set")

    async def run(self, ctx: AgentContext) -> None:
        import anthropic

        key = self.api_key or os.environ.get(self.api_key_env)  # None: the SDK looks for its own variables
        client = anthropic.AsyncAnthropic(base_url=self.base_url, api_key=key, max_retries=2)
        computer_type, beta = computer_version(self.model)
        tools, names = api_tools(ctx.tools.specs(), computer_type)
        ctx.usage.model = self.model
        messages: list[dict[str, Any]] = [{"role": "user", "content": ctx.instruction}]
        ctx.messages = messages
        try:
            for _turn in range(ctx.max_steps):
                prune_screenshots(messages, self.keep_screenshots)
                # anthropic 2.x has no temperature argument; it still goes in the request body
                # (None leaves it out, for models that refuse sampling parameters).
                extra = {**({"temperature": self.temperature} if self.temperature is not None else {}), **self.request}
                raw = await client.beta.messages.with_raw_response.create(
                    model=self.model, max_tokens=self.max_tokens, system=system_prompt(ctx.mode, ctx.no_bash),
                    tools=tools, messages=messages, betas=[beta], extra_body=extra or None)
                ctx.usage.api_retries += raw.retries_taken  # the SDK's retries of rate limits and server errors
                reply = await raw.parse()
                ctx.usage.add(reply.usage)
                ctx.usage.model = reply.model or self.model  # the dated id that answered, for the price table
                content = [b.model_dump(exclude_none=True) for b in reply.content]
                messages.append({"role": "assistant", "content": content})
                uses = [b for b in reply.content if b.type == "tool_use"]
                if not uses:
                    ctx.final_text = " ".join(b.text for b in reply.content if b.type == "text")
                    return
                results = []
                for use in uses:
                    ctx.steps += 1
                    ctx.usage.bad_tool_calls += use.name not in names  # the gateway answers it with the error
                    gateway_name = names.get(use.name, use.name)
                    result = await ctx.tools.call(gateway_name, dict(use.input or {}))
                    results.append({"type": "tool_result", "tool_use_id": use.id, "content": to_blocks(result),
                                    "is_error": result.is_error})
                messages.append({"role": "user", "content": results})
        except anthropic.APIError as e:
            raise AgentError(f"Anthropic API error: {e}") from None
        finally:
            await client.close()
        raise StepCapReached(f"no final answer within {ctx.max_steps} turns")
