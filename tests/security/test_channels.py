"""Every milestone says the channel that caused it (the app's GUI or its API), as the app's own hooks tell;
in gui mode a key step done through the API does not count (mode_violation), unless the run counts it
(flagged, and the report shows SR both ways). An agent given the app's API in gui mode stands for one
that got hold of it some other way. On both backends: in a container the app's services share the agent's
network namespace, and the channel still comes from the app's hooks."""

import asyncio

import pytest

from mcpworld.agents import make_agent
from mcpworld.agents.base import Agent
from mcpworld.config.load import load_tasks
from mcpworld.report.build import build
from mcpworld.trial import Trial, TrialOptions

TASKS = load_tasks()


class ThroughTheApi(Agent):
    """Replays the task's MCP reference solution with tools its mode does not list."""

    name = "through-the-api"

    def __init__(self, rt):
        self.rt = rt

    async def run(self, ctx):
        for step in self.rt.task.oracle_for("mcp"):
            await ctx.tools.call_unlisted(step.tool, ctx.values.expand_tree(step.args))


def run(task, agent, tmp_path, **opts):
    return asyncio.run(Trial(TASKS[task], agent, TrialOptions(**opts), tmp_path).run())


@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
@pytest.mark.parametrize("task", ["anki/161", "obs/79"])
def test_gui_mode_does_not_count_what_the_api_did(task, backend, tmp_path):
    r = run(task, ThroughTheApi(TASKS[task]), tmp_path / "strict", mode="gui", backend=backend)
    assert not r.success and r.failure == "mode_violation", r.failure_detail
    assert r.kscr == 0.0 and r.verdict.mode_violation
    assert all(not s.reached and s.api_only_seq is not None for s in r.verdict.key_steps if s.id in r.verdict.mode_violation)

    counted = run(task, ThroughTheApi(TASKS[task]), tmp_path / "counted", mode="gui", count_api_in_gui=True,
                  backend=backend)
    assert counted.success and counted.verdict.mode_violation == r.verdict.mode_violation
    assert {s.channel for s in counted.verdict.key_steps if s.reached} == {"api"}
    report = build([(str(tmp_path / "counted"), counted)], [{}])
    assert report.per_mode["gui"].sr == 1.0 and report.sr_gui_only["gui"] == 0.0


@pytest.mark.parametrize("task", ["anki/161", "obs/79"])
def test_each_reached_key_step_names_its_channel(task, tmp_path):
    gui = run(task, make_agent("oracle"), tmp_path / "gui", mode="gui")
    api = run(task, make_agent("oracle"), tmp_path / "mcp", mode="mcp")
    assert gui.success and api.success, (gui.failure_detail, api.failure_detail)
    assert {s.channel for s in gui.verdict.key_steps if s.reached} == {"gui"} and not gui.verdict.mode_violation
    assert {s.channel for s in api.verdict.key_steps if s.reached} == {"api"}
    report = build([(str(tmp_path / "gui"), gui), (str(tmp_path / "mcp"), api)], [{}])
    assert report.channels["gui"].get("api", 0) == 0 and report.channels["mcp"].get("gui", 0) == 0
