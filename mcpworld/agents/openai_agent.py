"""An agent for any model served with OpenAI's Chat Completions protocol (vLLM, SGLang, Ollama, LM Studio,
OpenAI itself, routers), through the `openai` SDK, with the gateway's tools.

Every gateway tool is a function tool with its JSON schema. Tool messages carry text only in this protocol,
so the screenshots a turn's calls returned follow the tool messages in one user message, as image parts;
the newest `keep_screenshots` stay in the history, older ones become a short note. A call with malformed
arguments or an unknown tool gets the error back as its result, as a person would see an error, and is
counted (usage.bad_tool_calls). The SDK retries rate limits and server errors with its own backoff; the
retries are counted (usage.api_retries). Extra request fields (temperature, seed, max_tokens, a provider's
own) go into every request as they are given.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from gateway.base import image_data
from mcpworld.agents.base import KEEP_SCREENSHOTS, Agent, AgentContext, AgentError, StepCapReached, register
from mcpworld.agents.prompts import system_prompt

KEY_ENV = "OPENAI_API_KEY"
CHECK_TIMEOUT = 5.0  # seconds for the up-front GET /models
_API_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what the protocol accepts as a function name
_HINTS = {"readOnlyHint": "read-only", "destructiveHint": "destructive", "idempotentHint": "idempotent"}
REMOVED = "[older screenshot removed]"


def function_tools(specs) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Function tool declarations, and api name -> gateway name."""
    tools, names = [], {}
    for s in specs:
        api_name = s.name if _API_NAME.fullmatch(s.name) else re.sub(r"[^A-Za-z0-9_-]", "_", s.name)[:64]
        names[api_name] = s.name
        description = s.description
        if s.display:
            w, h = s.display
            description += f" Coordinates are pixels [x, y] on the {w}x{h} screen, (0, 0) at the top left."
        # MCP's annotations have no field in this protocol: they go in the description
        hints = [label for key, label in _HINTS.items() if s.annotations.get(key) is True]
        if hints:
            description += f" ({', '.join(hints)})"
        parameters = s.input_schema if s.input_schema.get("type") == "object" else {"type": "object", "properties": {}}
        tools.append({"type": "function", "function": {"name": api_name, "description": description,
                                                       "parameters": parameters}})
    return tools, names


def tool_message(call_id: str, result) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The tool message for one result (its text), and the result's images as image parts."""
    texts, images = [], []
    for c in result.content:
        if c.get("type") == "text":
            texts.append(c["text"])
        elif c.get("type") == "image":
            images.append({"type": "image_url", "image_url": {
                "url": f"data:{c.get('mimeType', 'image/png')};base64,{image_data(c)}"}})
        else:
            texts.append(str(c))
    if images:
        texts.append(f"[{len(images)} screenshot{'s' if len(images) > 1 else ''} in the next user message]")
    text = "\n".join(texts) or "(no output)"
    return {"role": "tool", "tool_call_id": call_id, "content": "Error: " + text if result.is_error else text}, images


def prune_screenshots(messages: list[dict[str, Any]], keep: int = KEEP_SCREENSHOTS) -> None:
    """Replace all but the newest `keep` image parts with a short note."""
    seen = 0
    for msg in reversed(messages):
        if msg["role"] != "user" or not isinstance(msg["content"], list):
            continue
        for i in reversed(range(len(msg["content"]))):
            if msg["content"][i].get("type") == "image_url":
                seen += 1
                if seen > keep:
                    msg["content"][i] = {"type": "text", "text": REMOVED}


def parse_arguments(raw) -> dict[str, Any]:
    """A call's arguments as an object, or ValueError saying what is wrong with them."""
    if isinstance(raw, dict):  # some servers send an object where the protocol has a JSON string
        return raw
    try:
        args = json.loads(raw) if raw and raw.strip() else {}
    except json.JSONDecodeError as e:
        raise ValueError(f"the arguments are not valid JSON ({e}): {raw[:500]}") from None
    if not isinstance(args, dict):
        raise ValueError(f"the arguments must be a JSON object, not {type(args).__name__}: {raw[:500]}")
    return args


@register
class OpenAIAgent(Agent):
    name = "openai"

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key_env: str = KEY_ENV,
                 api_key: str | None = None, request: dict[str, Any] | None = None,
                 keep_screenshots: int = KEEP_SCREENSHOTS, max_retries: int = 4, timeout: float = 300.0):
        """request: extra fields for every request (temperature, seed, max_tokens, a provider's own);
        max_retries: the SDK's retries of rate limits and server errors, with its exponential backoff."""
        self.model, self.base_url, self.api_key_env, self.api_key = model, base_url, api_key_env, api_key
        self.request = dict(request or {})
        self.keep_screenshots, self.max_retries, self.timeout = keep_screenshots, max_retries, timeout

    def _key(self) -> str:
        key = self.api_key or os.environ.get(self.api_key_env)
        if not key:
            raise AgentError(f"--agent openai reads its API key from ${self.api_key_env}, which is not set (a local "
                             f"server that wants no key takes any value, e.g. {self.api_key_env}=none)")
        return key

    def check(self) -> None:
        if not self.model:
            raise AgentError("--agent openai needs --model NAME (the model the server serves)")
        key = self._key()
        if self.base_url:
            served = served_models(self.base_url, key, self.api_key_env)
            if served is not None and self.model not in served:
                raise AgentError(f"model '{self.model}' is not among the models {self.base_url} serves: "
                                 + ", ".join(sorted(served)[:20]))

    async def run(self, ctx: AgentContext) -> None:
        import openai

        if not self.model:
            raise AgentError("no model given (--model)")
        client = openai.AsyncOpenAI(base_url=self.base_url, api_key=self._key(), max_retries=self.max_retries,
                                    timeout=self.timeout)
        tools, names = function_tools(ctx.tools.specs())
        ctx.usage.model = self.model
        messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt(ctx.mode, ctx.no_bash)},
                                          {"role": "user", "content": ctx.instruction}]
        ctx.messages = messages
        try:
            for turn in range(ctx.max_steps):
                prune_screenshots(messages, self.keep_screenshots)
                raw = await client.chat.completions.with_raw_response.create(
                    model=self.model, messages=messages, tools=tools, extra_body=self.request or None)
                ctx.usage.api_retries += raw.retries_taken
                reply = raw.parse()
                self._count(ctx, reply)
                if not reply.choices:
                    raise AgentError(f"the model's reply has no choices: {str(reply)[:300]}")
                message = reply.choices[0].message
                calls = message.tool_calls or []
                if not calls:
                    messages.append({"role": "assistant", "content": message.content or ""})
                    ctx.final_text = message.content or ""
                    return
                await self._act(ctx, messages, names, turn, message.content, calls)
        except openai.APIError as e:
            raise AgentError(f"API error from {self.base_url or 'the OpenAI API'}: {e}") from None
        except openai.OpenAIError as e:
            raise AgentError(f"openai client error: {e}") from None
        finally:
            await client.close()
        raise StepCapReached(f"no final answer within {ctx.max_steps} turns")

    async def _act(self, ctx: AgentContext, messages: list, names: dict[str, str], turn: int, content, calls) -> None:
        """Run one reply's tool calls; append the reply, their tool messages and then their screenshots."""
        echoed, answers, images = [], [], []
        for i, call in enumerate(calls):
            ctx.steps += 1
            call_id = call.id or f"call_{turn}_{i}"
            function = getattr(call, "function", None)  # a custom (non-function) tool call has none
            api_name = function.name if function else getattr(call, "type", "?")
            raw_args = function.arguments if function else ""
            try:
                if api_name not in names:
                    raise ValueError(f"there is no tool named '{api_name}'; the tools are: {', '.join(names)}")
                args = parse_arguments(raw_args)
            except ValueError as e:
                ctx.usage.bad_tool_calls += 1
                # the history gets "{}" in its place: servers that parse earlier calls' arguments (vLLM's chat
                # templates) would refuse every later request over it; the error below quotes the original
                echoed.append({"id": call_id, "type": "function", "function": {"name": api_name, "arguments": "{}"}})
                answers.append({"role": "tool", "tool_call_id": call_id, "content": f"Error: {e}"})
                continue
            echoed.append({"id": call_id, "type": "function",
                           "function": {"name": api_name, "arguments": raw_args if isinstance(raw_args, str)
                                        else json.dumps(raw_args)}})
            result = await ctx.tools.call(names[api_name], args)
            answer, shots = tool_message(call_id, result)
            answers.append(answer)
            if shots:
                images += [{"type": "text", "text": f"Screenshot from tool call {call_id}:"}, *shots]
        messages.append({"role": "assistant", "content": content, "tool_calls": echoed})
        messages.extend(answers)
        if images:
            messages.append({"role": "user", "content": images})

    @staticmethod
    def _count(ctx: AgentContext, reply) -> None:
        ctx.usage.model = reply.model or ctx.usage.model  # the model that answered, for the price table
        u = reply.usage
        if u is None:
            return
        details = getattr(u, "prompt_tokens_details", None)
        cached = (getattr(details, "cached_tokens", 0) or 0) if details else 0
        # prompt_tokens includes the cached ones; input_tokens counts the rest, as Anthropic's does, so that the
        # price table charges cache reads once at their own price
        ctx.usage.input_tokens += max((u.prompt_tokens or 0) - cached, 0)
        ctx.usage.output_tokens += u.completion_tokens or 0
        ctx.usage.cache_read_input_tokens += cached


def served_models(base_url: str, key: str, key_env: str = KEY_ENV) -> set[str] | None:
    """The model ids the server at base_url lists (GET /models), None where it answers but lists none;
    AgentError naming the URL when nothing answers there or it refuses the key."""
    import openai

    try:
        with openai.OpenAI(base_url=base_url, api_key=key, timeout=CHECK_TIMEOUT, max_retries=0) as client:
            return {m.id for m in client.models.list()} or None
    except (openai.AuthenticationError, openai.PermissionDeniedError) as e:
        raise AgentError(f"{base_url} refused the API key in ${key_env} (GET {base_url.rstrip('/')}/models: "
                         f"{e.status_code})") from None
    except openai.APIStatusError:
        return None  # it answers; it just has no model list
    except openai.APIError as e:  # no connection, a timeout, a reply that is not the protocol's
        raise AgentError(f"no OpenAI-compatible server answers at {base_url} (GET {base_url.rstrip('/')}/models: "
                         f"{e})") from None
