"""The registry: providers in, one list out; modes and ablations as filters; MCP passthrough; the call log."""

import asyncio
import json
import sys
from pathlib import Path

import psutil
import pytest

from gateway.mcp_provider import MARKER, McpServerProvider
from gateway.registry import CallLog, ToolFilter, ToolRegistry
from gateway.tools.bash import BashTool
from gateway.tools.computer import ComputerTool
from gateway.tools.edit import EditTool

SERVER = Path(__file__).with_name("sample_mcp_server.py")


def real_providers(env):
    return [ComputerTool(env.display), BashTool(env), EditTool(env),
            McpServerProvider("anki", [sys.executable, str(SERVER)], env={}, call_timeout=20)]


@pytest.mark.parametrize("flt,expected", [
    (ToolFilter("gui"), {"computer", "bash", "str_replace_based_edit_tool"}),
    (ToolFilter("mcp"), {"anki__echo", "anki__picture", "anki__count", "anki__fail", "anki__crash", "bash", "str_replace_based_edit_tool"}),
    (ToolFilter("hybrid"), {"computer", "bash", "str_replace_based_edit_tool", "anki__echo", "anki__picture", "anki__count", "anki__fail", "anki__crash"}),
    (ToolFilter("hybrid", no_bash=True), {"computer", "anki__echo", "anki__picture", "anki__count", "anki__fail", "anki__crash"}),
    (ToolFilter("mcp", no_bash=True), {"anki__echo", "anki__picture", "anki__count", "anki__fail", "anki__crash"}),
    (ToolFilter("hybrid", only=frozenset({"computer", "anki__fail"})), {"computer", "anki__fail"}),
    (ToolFilter("hybrid", only=frozenset({"anki"})), {"anki__echo", "anki__picture", "anki__count", "anki__fail", "anki__crash"}),
])
async def test_mode_filters(env, flt, expected):
    reg = ToolRegistry(real_providers(env), flt)
    try:
        await reg.start()
        assert {s.name for s in reg.specs()} == expected
    finally:
        await reg.close()


async def test_tools_naming_nothing_available_is_an_error(env):
    reg = ToolRegistry(real_providers(env), ToolFilter("gui", only=frozenset({"anki__fail"})))
    try:
        with pytest.raises(ValueError, match="anki__fail"):
            await reg.start()
    finally:
        await reg.close()


async def test_unknown_tool_and_call_log(env, tmp_path):
    reg = ToolRegistry(real_providers(env), ToolFilter("gui"), CallLog(tmp_path / "calls.jsonl"))
    try:
        await reg.start()
        assert (await reg.call("bash", {"command": "echo x"})).texts == ["x\n"]
        r = await reg.call("anki__echo", {"text": "x"})  # exists, but not in gui mode
        assert r.is_error and "unknown tool" in r.texts[0]
    finally:
        await reg.close()
    rows = [json.loads(l) for l in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert [(r["tool"], r["kind"], r["is_error"]) for r in rows] == [("bash", "bash", False), ("anki__echo", "unknown", True)]
    assert rows[0]["args"] == {"command": "echo x"} and rows[0]["duration_s"] >= 0


async def test_mcp_server_tools_are_namespaced_and_passed_through():
    provider = McpServerProvider("sample", [sys.executable, str(SERVER)], env={}, call_timeout=20)
    reg = ToolRegistry([provider], ToolFilter("mcp"))
    await reg.start()
    try:
        assert {s.name for s in reg.specs()} == {"sample__echo", "sample__picture", "sample__count", "sample__fail",
                                                 "sample__crash"}
        assert [s.kind for s in reg.specs()] == ["mcp"] * 5
        r = await reg.call("sample__echo", {"text": "hi"})
        assert r.content == ({"type": "text", "text": "hi"},) and not r.is_error
        r = await reg.call("sample__picture", {})
        assert [c["type"] for c in r.content] == ["text", "image"] and r.images[0]["mimeType"] == "image/png"
        r = await reg.call("sample__fail", {"reason": "no such deck"})
        assert r.is_error and "no such deck" in r.texts[0]
        r = await reg.call("sample__echo", {})  # argument validation by the server, passed through as isError
        assert r.is_error
    finally:
        await reg.close()


async def test_a_crashing_tool_says_its_name_and_its_traceback_is_in_the_servers_log(tmp_path):
    log = tmp_path / "mcp-sample.log"
    provider = McpServerProvider("sample", [sys.executable, str(SERVER)], env={}, call_timeout=20, log=log)
    reg = ToolRegistry([provider], ToolFilter("mcp"))
    await reg.start()
    try:
        r = await reg.call("sample__crash", {})
        assert r.is_error and r.texts[0] == "Error executing tool crash"
    finally:
        await reg.close()
    assert "KeyError: 'sceneItems'" in log.read_text()


async def test_annotations_output_schemas_and_structured_results_reach_the_gateways_clients():
    """Served by the gateway (as `mcpworld gateway` does), a client sees the app server's annotations, output
    schema and structured result unchanged, and the computer tool's size is not smuggled in annotations."""
    from mcp import Client

    from gateway.server import build_server

    provider = McpServerProvider("sample", [sys.executable, str(SERVER)], env={}, call_timeout=20)
    reg = ToolRegistry([provider], ToolFilter("mcp"))
    await reg.start()
    try:
        async with Client(build_server(reg)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            count = tools["sample__count"]
            assert count.annotations.read_only_hint is True and count.annotations.open_world_hint is False
            assert count.output_schema["type"] == "object"
            assert tools["sample__echo"].output_schema is None
            r = await client.call_tool("sample__count", {"text": "one two three"})
            assert r.structured_content == {"words": 3, "text": "one two three"} and not r.is_error
    finally:
        await reg.close()


async def test_builtin_tools_declare_their_hints_and_the_screen_size_apart(env):
    reg = ToolRegistry([ComputerTool(env.display), BashTool(env), EditTool(env)], ToolFilter("gui"))
    await reg.start()
    try:
        specs = {s.name: s for s in reg.specs()}
        assert specs["computer"].display == (1280, 800)
        assert "display_width_px" not in specs["computer"].annotations
        assert all(s.annotations.get("readOnlyHint") is False for s in specs.values())
    finally:
        await reg.close()


async def test_a_server_that_dies_costs_its_calls_never_the_callers_task():
    """The MCP SDK's task group cancels the task that entered it when its server's pipes break: that is the
    provider's own task, so the caller (a trial) goes on, the calls come back as errors and closing neither raises nor hangs."""
    provider = McpServerProvider("sample", [sys.executable, str(SERVER)], env={}, call_timeout=5)
    reg = ToolRegistry([provider], ToolFilter("mcp"))
    await reg.start()
    servers = [p for p in psutil.Process().children(recursive=True) if p.environ().get(MARKER) == provider._marker]
    assert len(servers) == 1
    servers[0].kill()
    r = await reg.call("sample__echo", {"text": "hi"})
    assert r.is_error
    for _ in range(20):  # a cancellation leaking into this task would land on one of these
        await asyncio.sleep(0.05)
    # closing over the dead server neither raises nor hangs on its broken pipes (the bound only catches a hang)
    await asyncio.wait_for(reg.close(), 30)
    assert not asyncio.current_task().cancelling()
