"""The scripted solutions' step options at work in a real trial (Anki, MCP mode): `unless` skips a step
once the app has reported its event, and runs it while the app has not."""

import json

from mcpworld.agents import make_agent
from mcpworld.config.load import load_tasks
from mcpworld.trial import Trial, TrialOptions

TASK = load_tasks()["anki/161"]


def note(front: str) -> dict:
    return {"tool": "anki__add_note", "args": {"fields": {"Front": front, "Back": "x"}, "deck": "Default"}}


async def test_a_step_unless_reported_runs_only_while_the_app_has_not_reported_it(tmp_path):
    steps = [
        note("first"),
        # a second try that the first made needless: skipped
        {**note("again"), "unless": {"event": "note_added", "where": {"fields.Front": "first"}}},
        # a second try whose event never came: runs
        {**note("second"), "unless": {"event": "note_added", "where": {"fields.Front": "never"}}},
    ]
    folder = tmp_path / "trial"
    await Trial(TASK, make_agent("oracle", steps=steps), TrialOptions(mode="mcp"), folder).run()
    calls = [json.loads(line) for line in (folder / "tool_calls.jsonl").read_text().splitlines()]
    fronts = [c["args"]["fields"]["Front"] for c in calls if c["tool"] == "anki__add_note"]
    assert fronts == ["first", "second"]
    added = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    assert [e["payload"]["fields"]["Front"] for e in added if e["name"] == "note_added"] == ["first", "second"]
