"""The OpenAI-compatible agent with the real `openai` client, pointed at a scripted Chat Completions server on a
loopback port that answers like a model: it replays a task's reference solution as tool calls, one per reply,
checks that each request carries what the protocol requires, and at times answers with a malformed call, an
unknown tool or a rate limit. The apps, the display and the gateway are real; only the model is scripted."""

import base64
import io
import json
import os
import re
import time

import pytest

from gateway.net import free_port
from gateway.base import ToolSpec
from gateway.modes import Kind
from evaluator.events import Event
from mcpworld.agents import make_agent
from mcpworld.agents.simple import payload_matches
from mcpworld.agents.openai_agent import REMOVED, function_tools, parse_arguments, prune_screenshots
from mcpworld.agents.prompts import system_prompt
from mcpworld.config.task import DRAW_SHARE
from mcpworld.config.load import load_tasks
from mcpworld.report.build import build
from mcpworld.report.html import render
from mcpworld.trial import Trial, TrialOptions
from mcpworld.verify import in_turn
from tests.mcpworld.scripted_api import ScriptedServer
from tests.mcpworld.test_cli import mcpworld

TASKS = load_tasks()
MODEL = "scripted-model"
ANSWERED_BY = "scripted-model-2026-01"  # the id replies carry, as hosted APIs answer with a dated one
USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 30}}
RATE_LIMITED, SERVER_ERROR = ("429",), ("500",)
BAD_JSON = '{"fields": {"Front": "What is'


class ScriptedChatAPI(ScriptedServer):
    """POST /v1/chat/completions: the next scripted reply (RATE_LIMITED: a 429 the client must retry);
    GET /v1/models: the one model it serves. What a request lacks is kept in `problems`."""

    def __init__(self, script):
        self.script, self.problems, self.served = list(script), [], 0
        # what a Look compares: the trial's folder (its events), the screen before the last call, and so on
        self.trial_dir, self.before, self.looked_at, self.events_before, self.events_at_start = None, None, None, 0, None
        super().__init__()
        self.base_url = self.url + "/v1"

    def answer(self, request):
        if request["method"] == "GET" and request["path"] == "/v1/models":
            return 200, {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0,
                                                     "owned_by": "test"}]}, {}
        if request["path"] != "/v1/chat/completions":
            return 404, {"error": {"message": f"no {request['path']}"}}, {}
        self.problems += [f"request {len(self.requests)}: {p}" for p in protocol_problems(request["body"])]
        reply = self.next_reply(request)
        if reply is RATE_LIMITED:
            return 429, {"error": {"message": "rate limited", "type": "rate_limit_error"}}, {"retry-after-ms": "50"}
        if reply is SERVER_ERROR:
            return 500, {"error": {"message": "the model crashed", "type": "server_error"}}, {"retry-after-ms": "50"}
        self.served += 1
        return 200, reply, {}

    def next_reply(self, request):
        """The script's next reply; a Look first takes screenshots until what it waits for is in sight, and an
        Unless step is left out if what it guards against was already reported."""
        if self.events_at_start is None:  # the solution begins
            self.events_at_start = len(self.events_seen())
        while self.script and isinstance(self.script[0], (Look, Unless)):
            item = self.script[0]
            if isinstance(item, Unless):
                self.script[:1] = [] if item.seen(self, request) else [item.reply]
                continue
            if item.seen(self, request):
                self.script.pop(0)
                continue
            item.looks += 1
            if item.looks > Look.LIMIT:
                self.problems.append(f"never saw {item.what} after {Look.LIMIT} screenshots")
                self.script.pop(0)
                continue
            time.sleep(Look.PAUSE)
            return call_reply(f"look_{len(self.requests)}", "computer", {"action": "screenshot"})
        reply = self.script.pop(0) if self.script else text_reply("(script exhausted)")
        if not isinstance(reply, tuple):  # a call: what the screen and the events were before it
            self.before, self.looked_at, self.events_before = last_screen(request), None, len(self.events_seen())
        return reply

    def events_seen(self) -> list[dict]:
        """The events the trial has recorded so far, from its events.jsonl (written as they come)."""
        path = self.trial_dir / "events.jsonl" if self.trial_dir else None
        if path is None or not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


class Look:
    """A model looking at the screen before its next call: a screenshot each turn until `seen(server, request)`
    holds (what the step opened is drawn and still, or the app has reported the step's effect)."""

    LIMIT, PAUSE = 150, 0.2  # screenshots at most, and the model's "thinking" between two of them

    def __init__(self, what, seen):
        self.what, self.seen, self.looks = what, seen, 0


class Unless:
    """A second try the model makes only if the first did not take (the oracle's `unless`)."""

    def __init__(self, seen, reply):
        self.seen, self.reply = seen, reply


def last_screen(request):
    """The newest screenshot in the request, as pixels (None before the first)."""
    from PIL import Image

    urls = [p["image_url"]["url"] for m in request["body"]["messages"] if m["role"] == "user"
            and isinstance(m["content"], list) for p in m["content"] if p.get("type") == "image_url"]
    return Image.open(io.BytesIO(base64.b64decode(urls[-1].split(",", 1)[1]))).convert("RGB") if urls else None


def changed_share(a, b) -> float:
    """The share of the pixels that differ between two screenshots (1.0 if either is missing)."""
    from PIL import ImageChops

    if a is None or b is None or a.size != b.size:
        return 1.0
    diff = ImageChops.difference(a, b).convert("L").point(lambda v: 255 if v else 0)
    return diff.histogram()[255] / (a.size[0] * a.size[1])


def drawn(share):
    """Seen once the screen differs from the one before the call by `share` (half of it: a screenshot is smaller
    than the screen the oracle's drawing watch counts) and two screenshots in a row are alike (a caret's blink
    aside)."""
    def seen(server, request):
        now, previous = last_screen(request), server.looked_at
        server.looked_at = now
        return changed_share(server.before, now) >= share / 2 and changed_share(previous, now) < 0.002
    return seen


def reported(shown, since_call: bool):
    """Seen once the trial has recorded the event (matching its where) since the last call was sent, or since the
    solution began (`since_call` False: an `unless`)."""
    where = payload_matches(shown, "where")

    def seen(server, request):
        events = server.events_seen()[server.events_before if since_call else server.events_at_start:]
        return any(e["name"] == shown.event and where(Event.model_validate(e)) for e in events)
    return seen


def protocol_problems(body) -> list[str]:
    """What the Chat Completions protocol needs that this request lacks: function tools with object schemas,
    every tool call answered by a tool message right after it, the screenshots of the last calls as image parts
    in the user message that follows their tool messages."""
    problems = []
    for t in body.get("tools") or []:
        f = t.get("function") or {}
        if t.get("type") != "function" or not f.get("name") or (f.get("parameters") or {}).get("type") != "object":
            problems.append(f"not a function tool with an object schema: {t}")
    if not body.get("tools"):
        problems.append("no tools")
    msgs = body["messages"]
    last = max((j for j, x in enumerate(msgs) if x["role"] == "assistant"), default=-1)
    for i, m in enumerate(msgs):
        if m["role"] != "assistant" or not m.get("tool_calls"):
            continue
        ids = [c["id"] for c in m["tool_calls"]]
        answers = msgs[i + 1:i + 1 + len(ids)]
        if [x.get("tool_call_id") for x in answers if x["role"] == "tool"] != ids:
            problems.append(f"tool calls {ids} not answered by tool messages right after them")
        # older screenshots may have been pruned; the last turn's must be there
        if i == last and any("screenshot" in x["content"] for x in answers if x["role"] == "tool"):
            after = msgs[i + 1 + len(ids):i + 2 + len(ids)]
            parts = after[0]["content"] if after and after[0]["role"] == "user" else []
            if not any(isinstance(p, dict) and p.get("type") == "image_url" for p in parts):
                problems.append(f"no image part after the screenshot of {ids}")
    return problems


def completion(message, finish_reason):
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": ANSWERED_BY,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}], "usage": USAGE}


def call_reply(call_id, name, arguments):
    """One tool call; arguments a dict (sent as its JSON) or a string sent as it is."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return completion({"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}]}, "tool_calls")


def text_reply(text):
    return completion({"role": "assistant", "content": text}, "stop")


def replay(key, mode):
    """The task's reference solution for the mode, a tool call per reply (ids call_0, call_1, ...)."""
    return [call_reply(f"call_{i}", s.tool, s.args) for i, s in enumerate(TASKS[key].task.oracle_for(mode))]


def looked_replay(key, mode):
    """The reference solution as a model that looks makes its calls: after a step that opens something (a
    window, a palette), screenshots until it is drawn; after a step whose effect an app event shows, screenshots
    until the app has reported it; a second try only if the first did not take. What the oracle waits for, a
    model sees."""
    items = []
    for i, s in enumerate(TASKS[key].task.oracle_for(mode)):
        reply = call_reply(f"call_{i}", s.tool, s.args)
        items.append(Unless(reported(s.unless, since_call=False), reply) if s.unless else reply)
        if s.draws or s.window:
            items.append(Look(f"what step {i} opens", drawn(s.draw_share or DRAW_SHARE)))
        if s.shows:
            items.append(Look(f"step {i}'s {s.shows.event}", reported(s.shows, since_call=True)))
    return items


@pytest.fixture
def api():
    servers = []

    def make(script):
        servers.append(ScriptedChatAPI(script))
        return servers[-1]
    yield make
    for s in servers:
        s.close()


def agent(fake, **kw):
    return make_agent("openai", model=MODEL, base_url=fake.base_url, api_key="test-key", **kw)


async def trial(key, mode, fake, tmp_path, **kw):
    return await Trial(TASKS[key], agent(fake, **kw), TrialOptions(mode=mode), tmp_path / "t").run()


def tool_answer(request, call_id):
    return next(m for m in request["body"]["messages"] if m["role"] == "tool" and m["tool_call_id"] == call_id)


async def test_mcp_mode_through_a_malformed_call_an_unknown_tool_and_a_rate_limit(api, tmp_path):
    oracle = replay("anki/161", "mcp")
    fake = api([call_reply("bad_json", "anki__add_note", BAD_JSON), RATE_LIMITED,
                call_reply("no_tool", "anki__add_flashcard", {"front": "x"}), *oracle, text_reply("Added the card.")])
    r = await trial("anki/161", "mcp", fake, tmp_path, request={"temperature": 0, "seed": 7})
    assert r.success and r.kscr == 1.0, r.failure_detail
    assert fake.problems == []
    assert r.usage.bad_tool_calls == 2 and r.usage.api_retries == 1
    # and the HTML report's cost table shows both
    page = render(build([(str(tmp_path), r)], [{}]))
    assert '<td data-metric="cost.mcp.api_retries" data-format="int">1</td>' in page
    assert '<td data-metric="cost.mcp.bad_tool_calls" data-format="int">2</td>' in page
    assert r.steps == 2 + len(oracle) and r.tool_calls == len(oracle) and r.tool_calls_by_kind == {"mcp": len(oracle)}
    # every reply served is counted: prompt tokens less the cached ones in, completion tokens out, cached apart
    n = fake.served
    assert n == 3 + len(oracle) and len(fake.requests) == n + 1  # and the one refused with a 429
    u = r.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_input_tokens) == (70 * n, 20 * n, 30 * n)
    assert u.model == ANSWERED_BY

    body = fake.requests[0]["body"]
    assert body["model"] == MODEL and body["temperature"] == 0 and body["seed"] == 7
    assert body["messages"] == [{"role": "system", "content": system_prompt("mcp", False)},
                                {"role": "user", "content": TASKS["anki/161"].instruction}]
    tools = {t["function"]["name"]: t["function"] for t in body["tools"]}
    assert "computer" not in tools and {"bash", "str_replace_based_edit_tool", "anki__add_note"} <= set(tools)
    assert all(name.startswith("anki__") for name in set(tools) - {"bash", "str_replace_based_edit_tool"})
    assert "fields" in tools["anki__add_note"]["parameters"]["properties"]
    second = fake.requests[1]
    assert "not valid JSON" in tool_answer(second, "bad_json")["content"]
    # the malformed arguments are not sent back as the model's (servers that parse the history would refuse them)
    assert second["body"]["messages"][-2]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert fake.requests[2]["body"] == second["body"]  # the 429 was retried as it was
    assert "no tool named 'anki__add_flashcard'" in tool_answer(fake.requests[3], "no_tool")["content"]


async def test_hybrid_mode_screenshot_goes_back_as_an_image_part(api, tmp_path):
    oracle = replay("anki/161", "hybrid")
    fake = api([call_reply("shot", "computer", {"action": "screenshot"}), *oracle, text_reply("Done.")])
    r = await trial("anki/161", "hybrid", fake, tmp_path)
    assert r.success and r.kscr == 1.0, r.failure_detail
    assert fake.problems == [] and r.tool_calls_by_kind == {"gui": 1, "mcp": len(oracle)}
    assert r.usage.bad_tool_calls == 0 and r.usage.api_retries == 0

    messages = fake.requests[1]["body"]["messages"]
    assert messages[-2]["role"] == "tool" and messages[-2]["tool_call_id"] == "shot"
    shown = messages[-1]
    assert shown["role"] == "user"
    assert shown["content"][0] == {"type": "text", "text": "Screenshot from tool call shot:"}
    url = shown["content"][1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    png = base64.b64decode(url.split(",", 1)[1])
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    # the image is the size the model is told the screen is
    computer = next(t["function"] for t in fake.requests[0]["body"]["tools"] if t["function"]["name"] == "computer")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and f"on the {width}x{height} screen" in computer["description"]
    assert "action" in computer["parameters"]["properties"]
    assert fake.requests[0]["body"]["messages"][0]["content"] == system_prompt("hybrid", False)


async def test_gui_mode_replays_the_gui_oracle(api, tmp_path):
    """vscode/1's GUI solution, made by a model that looks at the screenshots and the app's events as it goes."""
    fake = api([*looked_replay("vscode/1", "gui"), text_reply("The theme is Solarized Light.")])
    fake.trial_dir = tmp_path / "t"
    r = await trial("vscode/1", "gui", fake, tmp_path, keep_screenshots=2)
    assert r.success and r.kscr == 1.0, r.failure_detail
    calls = fake.served - 1
    assert fake.problems == [] and r.tool_calls_by_kind == {"gui": calls} and r.steps == calls
    last = fake.requests[-1]["body"]["messages"]
    parts = [p for m in last if m["role"] == "user" and isinstance(m["content"], list) for p in m["content"]]
    shots = sum("screenshot" in m["content"] for m in last if m["role"] == "tool")
    assert shots > 2 and sum(p["type"] == "image_url" for p in parts) == 2
    assert sum(p.get("text") == REMOVED for p in parts) == shots - 2


def replayable(mode):
    """Each app's ready task whose reference solution for `mode` a scripted model replays, and no argument of it
    names a place only the run knows ({home}: the oracle fills it in, a script cannot). In mcp and hybrid the
    first such task whose calls replay as they are (no step waits for a window, a drawing or an event: the
    oracle's own options); in gui the one with the fewest steps, replayed looking (`looked_replay`)."""
    from mcpworld.verify import lacks_build
    first = {}
    for key, rt in sorted(TASKS.items(), key=lambda kv: (kv[1].app.id, int(kv[0].split("/")[1]))):
        steps = rt.task.oracle_for(mode) if rt.task.status == "ready" and mode in rt.task.modes else None
        if not steps or lacks_build(rt) or any(re.search(r"\{[A-Za-z_]\w*\}", json.dumps(s.args)) for s in steps):
            continue
        if mode == "gui":
            if rt.app.id not in first or len(steps) < len(TASKS[first[rt.app.id]].task.oracle_for(mode)):
                first[rt.app.id] = key
        elif rt.app.id not in first and not any(s.window or s.draws or s.shows or s.unless for s in steps):
            first[rt.app.id] = key
    return first


# one task per app in each mode, two of them per CI run, in turn
PER_APP = [f"{key}:{mode}" for mode in ("mcp", "hybrid", "gui") for key in replayable(mode).values()]


@pytest.mark.parametrize("case", in_turn(PER_APP, 2))
async def test_every_apps_task_through_the_scripted_server(api, tmp_path, case):
    key, mode = case.split(":")
    fake = api([*(looked_replay(key, mode) if mode == "gui" else replay(key, mode)), text_reply("Done.")])
    fake.trial_dir = tmp_path / "t"
    r = await trial(key, mode, fake, tmp_path)
    assert r.success and r.kscr == 1.0, (r.failure, r.failure_detail)
    assert fake.problems == [] and r.tool_calls == fake.served - 1


def test_every_app_has_a_task_the_scripted_server_replays():
    apps = {rt.app.id for rt in TASKS.values() if rt.task.status == "ready"}
    for mode in ("mcp", "hybrid", "gui"):
        assert set(replayable(mode)) == apps, (mode, apps - set(replayable(mode)))


async def test_a_script_that_stops_early_fails_cleanly(api, tmp_path):
    fake = api([call_reply("look", "anki__list_decks", {}), text_reply("Done.")])
    r = await trial("anki/164", "mcp", fake, tmp_path)
    assert not r.success and r.failure == "evaluated_failed" and r.agent_failure is None, r.failure_detail
    assert r.steps == 1 and fake.problems == [] and len(fake.requests) == 2
    assert "Default" in tool_answer(fake.requests[1], "look")["content"]


async def test_step_cap_and_a_failing_server(api, tmp_path):
    fake = api([call_reply(f"c{i}", "anki__list_decks", {}) for i in range(5)])
    r = await Trial(TASKS["anki/164"], agent(fake), TrialOptions(mode="mcp", max_steps=2), tmp_path / "cap").run()
    assert r.failure == "step_cap" and r.steps == 2 and len(fake.requests) == 2
    broken = api([SERVER_ERROR, SERVER_ERROR])
    r = await trial("anki/164", "mcp", broken, tmp_path, max_retries=1)
    assert r.failure == "agent_error" and "the model crashed" in r.failure_detail and len(broken.requests) == 2


def test_function_tools_prune_and_arguments():
    specs = [ToolSpec("srv__get.item", "Reads an item.", {}, Kind.MCP, annotations={"readOnlyHint": True}),
             ToolSpec("computer", "The mouse.", {"type": "object", "properties": {}}, Kind.GUI, display=(1280, 800))]
    tools, names = function_tools(specs)
    assert names == {"srv__get_item": "srv__get.item", "computer": "computer"}
    read = tools[0]["function"]
    assert read["parameters"] == {"type": "object", "properties": {}} and read["description"].endswith("(read-only)")
    assert "1280x800 screen" in tools[1]["function"]["description"]

    msgs = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": str(i)}}]} for i in range(5)]
    prune_screenshots(msgs, keep=3)
    assert [m["content"][0]["type"] for m in msgs] == ["text", "text", "image_url", "image_url", "image_url"]

    assert parse_arguments('{"a": 1}') == {"a": 1} and parse_arguments("") == {}
    for bad, why in ((BAD_JSON, "not valid JSON"), ("[1]", "JSON object")):
        with pytest.raises(ValueError, match=why):
            parse_arguments(bad)


def test_the_servers_protocol_check_sees_what_is_missing():
    tools = [{"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}]
    asked = {"role": "assistant", "content": None, "tool_calls": [{"id": "x"}]}
    shot = {"role": "tool", "tool_call_id": "x", "content": "[1 screenshot in the next user message]"}
    image = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:"}}]}
    assert protocol_problems({"tools": tools, "messages": [asked, shot, image]}) == []
    assert len(protocol_problems({"tools": tools, "messages": [asked, {"role": "user", "content": "hi"}]})) == 1
    assert len(protocol_problems({"tools": tools, "messages": [asked, shot]})) == 1
    assert len(protocol_problems({"tools": [{"type": "function", "function": {"name": "a"}}], "messages": []})) == 1


def test_cli_checks_the_key_and_the_server_before_any_environment(api, tmp_path):
    out = tmp_path / "run"
    keys = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    base = {k: v for k, v in os.environ.items() if k not in keys}
    run = ("run", "--task", "anki/164", "--mode", "mcp", "--out", str(out))
    r = mcpworld(*run, "--agent", "openai", "--model", MODEL, env=base)
    assert r.returncode == 2 and "$OPENAI_API_KEY" in r.stderr, r.stderr
    r = mcpworld(*run, "--agent", "openai", "--model", MODEL, "--api-key-env", "MY_MODEL_KEY", env=base)
    assert r.returncode == 2 and "$MY_MODEL_KEY" in r.stderr, r.stderr
    r = mcpworld(*run, "--agent", "claude", env=base)
    assert r.returncode == 2 and "$ANTHROPIC_API_KEY" in r.stderr, r.stderr
    nowhere = f"http://127.0.0.1:{free_port()}/v1"
    r = mcpworld(*run, "--agent", "openai", "--model", MODEL, "--base-url", nowhere,
                 env={**base, "OPENAI_API_KEY": "k"})
    assert r.returncode == 2 and f"no OpenAI-compatible server answers at {nowhere}" in r.stderr, r.stderr
    fake = api([])
    r = mcpworld(*run, "--agent", "openai", "--model", "other-model", "--base-url", fake.base_url,
                 env={**base, "OPENAI_API_KEY": "k"})
    assert r.returncode == 2 and f"'other-model' is not among the models {fake.base_url} serves: {MODEL}" in r.stderr
    assert not out.exists() and all(q["method"] == "GET" for q in fake.requests)


def test_cli_run_against_a_scripted_server(api, tmp_path):
    out = tmp_path / "run"
    fake = api([*replay("anki/164", "mcp"), text_reply("Created the deck.")])
    r = mcpworld("run", "--task", "anki/164", "--mode", "mcp", "--agent", "openai", "--model", MODEL, "--base-url",
                 fake.base_url, "--agent-option", "temperature=0", "--agent-option", "top_k=20",
                 "--keep-screenshots", "2", "--out", str(out),
                 env={**os.environ, "OPENAI_API_KEY": "secret-test-key"})
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sr"] == 1.0 and summary["cost"]["all"]["input_tokens"] == 70 * 2
    assert summary["cost"]["all"]["models"] == [ANSWERED_BY] and summary["cost"]["all"]["dollars"] is None  # no price
    run = json.loads((out / "run.json").read_text())
    assert run["agent_options"] == {"model": MODEL, "base_url": fake.base_url, "keep_screenshots": 2,
                                    "request": {"temperature": 0, "top_k": 20}}
    assert "secret-test-key" not in (out / "run.json").read_text()
    chat = [q for q in fake.requests if q["method"] == "POST"]
    headers = {k.lower(): v for k, v in chat[0]["headers"].items()}
    assert chat[0]["body"]["top_k"] == 20 and headers["authorization"] == "Bearer secret-test-key"
    assert fake.problems == [] and "tokens in" in r.stdout
