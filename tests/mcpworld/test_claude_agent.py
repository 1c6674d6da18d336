"""The Claude agent with the real `anthropic` client, pointed at a local server that answers in the
Messages API format with scripted replies (the API itself cannot be reached from here)."""

import base64
import io

import pytest
from PIL import Image

from mcpworld.agents import make_agent
from mcpworld.agents.claude import computer_version, prune_screenshots
from mcpworld.config.load import load_tasks
from mcpworld.report.build import build
from mcpworld.report.prices import Price
from mcpworld.trial import Trial, TrialOptions
from tests.mcpworld.scripted_api import ScriptedServer

TASKS = load_tasks()
RATE_LIMITED = ("429",)


class ScriptedMessagesAPI(ScriptedServer):
    """Answers POST /v1/messages with the next scripted reply; keeps every request it got."""

    def __init__(self, replies):
        self.replies = list(replies)
        super().__init__()

    def answer(self, request):
        reply = self.replies.pop(0) if self.replies else self.replies_exhausted()
        if reply is RATE_LIMITED:
            return 429, {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}, \
                {"retry-after-ms": "50"}
        return 200, reply, {}

    def replies_exhausted(self):
        return message([tool_use("tu_again", "computer", {"action": "screenshot"})], "tool_use")


def message(content, stop_reason, usage=(100, 20)):
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": content,
            "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1],
                      "cache_creation_input_tokens": 5, "cache_read_input_tokens": 7}}


def tool_use(id_, name, input_):
    return {"type": "tool_use", "id": id_, "name": name, "input": input_}


@pytest.fixture
def api():
    servers = []

    def make(replies):
        s = ScriptedMessagesAPI(replies)
        servers.append(s)
        return s
    yield make
    for s in servers:
        s.close()


async def test_claude_solves_a_task_through_the_gateway(api, tmp_path):
    fake = api([
        message([{"type": "text", "text": "Let me look."}, tool_use("tu_1", "computer", {"action": "screenshot"})],
                "tool_use"),
        message([tool_use("tu_2", "anki__add_note", {"fields": {"Front": "What is the largest planet?",
                                                                 "Back": "Jupiter"}, "deck": "Default"})], "tool_use"),
        message([{"type": "text", "text": "Added the card."}], "end_turn", usage=(300, 10)),
    ])
    # an older model (a dated id): computer_20250124 and its beta header
    agent = make_agent("claude", base_url=fake.url, api_key="test-key", model="claude-haiku-4-5-20251001")
    r = await Trial(TASKS["anki/161"], agent, TrialOptions(mode="hybrid"), tmp_path / "t").run()
    assert r.success and r.kscr == 1.0, r.failure_detail
    assert r.steps == 2 and r.tool_calls_by_kind == {"gui": 1, "mcp": 1}
    assert (r.usage.input_tokens, r.usage.output_tokens) == (500, 50)
    assert (r.usage.cache_creation_input_tokens, r.usage.cache_read_input_tokens) == (15, 21)
    # priced by the model id that answered: $3 in, $15 out, $3.75 cache writes, $0.30 cache reads per million
    assert r.usage.model == "claude-test" and r.max_steps == 50
    price = {"claude-test": Price(input=3, output=15, cache_write=3.75, cache_read=0.30)}
    cost = build([(str(tmp_path), r)], [{}], prices=price).cost["hybrid"]
    assert cost.dollars == pytest.approx((500 * 3 + 50 * 15 + 15 * 3.75 + 21 * 0.30) / 1e6)
    assert cost.tool_calls_by_tool == {"computer": 1, "anki__add_note": 1} and cost.mcp_rate == 0.5

    first = fake.requests[0]
    assert first["path"].startswith("/v1/messages")
    assert "computer-use-2025-01-24" in first["headers"].get("anthropic-beta", "")
    body = first["body"]
    assert body["temperature"] == 0 and body["model"] == "claude-haiku-4-5-20251001"
    assert body["messages"] == [{"role": "user", "content": TASKS["anki/161"].instruction}]
    tools = {t["name"]: t for t in body["tools"]}
    assert tools["computer"]["type"] == "computer_20250124" and tools["computer"]["display_width_px"] == 1280
    assert "computer-use-2025-11-24" not in first["headers"]["anthropic-beta"] and "enable_zoom" not in tools["computer"]
    assert tools["bash"]["type"] == "bash_20250124"
    assert tools["str_replace_based_edit_tool"]["type"] == "text_editor_20250728"
    assert "input_schema" in tools["anki__add_note"] and "application's own tools" in body["system"]
    # the screenshot went back as an image block in a tool_result
    result = fake.requests[1]["body"]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "tu_1"
    assert result["content"][0]["type"] == "image" and result["content"][0]["source"]["media_type"] == "image/png"


async def test_mcp_mode_no_bash_prompt_and_tools(api, tmp_path):
    """And through a rate limit (retried by the SDK, counted) and a call to a tool that is not there (answered
    with the gateway's error, counted)."""
    fake = api([RATE_LIMITED, message([tool_use("tu_1", "anki__nope", {})], "tool_use"),
                message([{"type": "text", "text": "Cannot."}], "end_turn")])
    agent = make_agent("claude", base_url=fake.url, api_key="k")
    r = await Trial(TASKS["anki/164"], agent, TrialOptions(mode="mcp", no_bash=True), tmp_path / "t").run()
    assert not r.success and r.failure == "evaluated_failed", r.failure_detail
    assert (r.usage.api_retries, r.usage.bad_tool_calls, len(fake.requests)) == (1, 1, 3)
    answer = fake.requests[-1]["body"]["messages"][-1]["content"][0]
    assert answer["tool_use_id"] == "tu_1" and answer["is_error"] and "unknown tool" in answer["content"][0]["text"]
    body = fake.requests[0]["body"]
    assert all(t["name"].startswith("anki__") for t in body["tools"])
    assert "no shell" in body["system"] and "cannot see" in body["system"]


async def test_editor_calls_reach_the_gateways_editor(api, tmp_path):
    """text_editor_20250728's calls come back under the gateway's own editor name, insert_text included."""
    path = "/tmp/mcpworld-claude-editor-test.txt"
    fake = api([
        message([tool_use("e1", "str_replace_based_edit_tool", {"command": "create", "path": path, "file_text": "a\nc"})],
                "tool_use"),
        message([tool_use("e2", "str_replace_based_edit_tool", {"command": "insert", "path": path, "insert_line": 1,
                                                                 "insert_text": "b"})], "tool_use"),
        message([tool_use("e3", "str_replace_based_edit_tool", {"command": "view", "path": path})], "tool_use"),
        message([{"type": "text", "text": "Done."}], "end_turn"),
    ])
    agent = make_agent("claude", base_url=fake.url, api_key="k")
    r = await Trial(TASKS["anki/164"], agent, TrialOptions(mode="mcp"), tmp_path / "t").run()
    assert r.steps == 3 and r.tool_calls_by_kind == {"edit": 3}, r.failure_detail
    viewed = fake.requests[3]["body"]["messages"][-1]["content"][0]
    assert viewed["tool_use_id"] == "e3" and not viewed.get("is_error")
    assert [line.split("\t")[1] for line in viewed["content"][0]["text"].splitlines()] == ["a", "b", "c"]


async def test_step_cap(api, tmp_path):
    """And a newer model's request shape: computer_20251124 with zoom, under its own beta header; its zoom
    comes back as the region at the screen's resolution."""
    fake = api([message([tool_use("z1", "computer", {"action": "zoom", "region": [0, 0, 640, 400]})], "tool_use")])
    # then always asks for another screenshot
    agent = make_agent("claude", base_url=fake.url, api_key="k", model="claude-opus-4-7")
    r = await Trial(TASKS["anki/164"], agent, TrialOptions(mode="gui", max_steps=3), tmp_path / "t").run()
    assert r.failure == "step_cap" and r.steps == 3 and r.max_steps == 3 and len(fake.requests) == 3
    first = fake.requests[0]
    beta = first["headers"].get("anthropic-beta", "")
    assert "computer-use-2025-11-24" in beta and "computer-use-2025-01-24" not in beta
    computer = next(t for t in first["body"]["tools"] if t["name"] == "computer")
    assert computer["type"] == "computer_20251124" and computer["enable_zoom"] is True
    zoomed = fake.requests[1]["body"]["messages"][-1]["content"][0]
    assert zoomed["tool_use_id"] == "z1" and not zoomed.get("is_error")
    png = base64.b64decode(zoomed["content"][0]["source"]["data"])
    assert Image.open(io.BytesIO(png)).size == (640, 400)  # the screen is the model's size here
    # only the newest screenshots stay in the history sent to the model
    last = fake.requests[-1]["body"]["messages"]
    images = [c for m in last if isinstance(m["content"], list) for b in m["content"] if b.get("type") == "tool_result"
              for c in b["content"] if c["type"] == "image"]
    assert len(images) == 2


def test_computer_version_by_model():
    """One table, by model-name prefix (dated ids included); anything else keeps computer_20250124."""
    new, old = ("computer_20251124", "computer-use-2025-11-24"), ("computer_20250124", "computer-use-2025-01-24")
    for model in ("claude-opus-4-7", "claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-4-5-20251101"):
        assert computer_version(model) == new, model
    for model in ("claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001", "claude-opus-4-1", "claude-sonnet-4-20250514",
                  "claude-3-7-sonnet-20250219", "claude-test", "some-proxy-model"):
        assert computer_version(model) == old, model


def test_prune_keeps_newest_screenshots():
    def result(n):
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": str(n),
                                             "content": [{"type": "image", "source": {}}]}]}
    msgs = [result(i) for i in range(6)]
    prune_screenshots(msgs, keep=3)
    kinds = [m["content"][0]["content"][0]["type"] for m in msgs]
    assert kinds == ["text", "text", "text", "image", "image", "image"]
