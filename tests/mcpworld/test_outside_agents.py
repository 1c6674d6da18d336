"""Outside agents: an external binary through the command agent (HTTP gateway), and any MCP client
through `mcpworld gateway` over stdio."""

import json
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

from mcpworld import paths
from mcpworld.agents import make_agent
from mcpworld.config.load import load_tasks
from mcpworld.trial import Trial, TrialOptions

TASKS = load_tasks()
AGENT = Path(__file__).with_name("external_agent.py")


async def test_command_agent_runs_a_binary_against_the_http_gateway(tmp_path):
    agent = make_agent("command", command=f"{sys.executable} {AGENT} {{prompt}}")
    r = await Trial(TASKS["anki/164"], agent, TrialOptions(mode="mcp", no_bash=True), tmp_path / "t").run()
    assert r.success, r.failure_detail
    calls = [json.loads(l) for l in (tmp_path / "t" / "tool_calls.jsonl").read_text().splitlines()]
    assert [c["tool"] for c in calls] == ["anki__create_deck"]
    assert calls[0]["args"] == {"name": "Spanish Vocabulary"}  # the prompt arrived as one argv slot


async def test_command_agent_failure_is_recorded(tmp_path):
    agent = make_agent("command", command=f"{sys.executable} -c 'import sys; sys.exit(3)' {{prompt}}")
    r = await Trial(TASKS["anki/164"], agent, TrialOptions(mode="mcp"), tmp_path / "t").run()
    assert not r.success and r.failure == "agent_error" and "exited with 3" in r.failure_detail


async def test_gateway_command_serves_the_tool_list_over_stdio(tmp_path):
    out = tmp_path / "gw"
    params = StdioServerParameters(command=sys.executable, cwd=str(paths.ROOT),
                                   args=["-m", "mcpworld.cli", "gateway", "--task", "anki/164", "--mode", "hybrid",
                                         "--no-bash", "--transport", "stdio", "--out", str(out)])
    async with Client(params, read_timeout_seconds=120) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        assert "computer" in names and "anki__create_deck" in names and "bash" not in names
        shot = await c.call_tool("computer", {"action": "screenshot"})
        assert shot.content[0].type == "image"
        bad = await c.call_tool("anki__delete_deck", {"name": "nope"})
        assert bad.is_error and "no deck named" in bad.content[0].text
        ok = await c.call_tool("anki__create_deck", {"name": "Spanish Vocabulary"})
        assert not ok.is_error
    result = json.loads((out / "result.json").read_text())
    assert result["success"] and result["agent"] == "external" and result["tool_calls"] == 3
