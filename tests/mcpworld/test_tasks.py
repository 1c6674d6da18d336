"""Every task: its oracle passes in every mode it declares, and the null agent fails.

These are real trials: Xvfb, xfwm4, the real app with its probe, the real MCP server, the
evaluator over websockets.
"""

import warnings

import pytest

from mcpworld.agents import make_agent
from mcpworld.config.load import load_tasks
from mcpworld.trial import Trial, TrialOptions

TASKS = load_tasks()
CASES = [(key, mode) for key, rt in TASKS.items() if rt.task.status == "ready" for mode in rt.task.modes]


def describe(result):
    steps = ", ".join(f"{s.id}={'y' if s.reached else 'n'}" for s in result.verdict.key_steps)
    return f"{result.failure}: {result.failure_detail} [{steps}]"


@pytest.mark.parametrize("key,mode", CASES, ids=[f"{k}-{m}" for k, m in CASES])
async def test_oracle_passes(key, mode, tmp_path):
    result = await Trial(TASKS[key], make_agent("oracle"), TrialOptions(mode=mode), tmp_path / "trial").run()
    task = TASKS[key].task
    if not result.success and task.oracle_for(mode) is task.oracle.gui:
        # A GUI reference solution is synthetic input into a real app on a loaded 2-core machine; about
        # one OBS trial in a hundred loses a click (obs/95's 'L', obs/89's second checkbox click). One
        # more attempt, said out loud in the warnings summary; two failures in a row fail the test.
        warnings.warn(f"{key} {mode}: the GUI oracle's first attempt failed, retried once: {describe(result)}")
        result = await Trial(TASKS[key], make_agent("oracle"), TrialOptions(mode=mode), tmp_path / "retry").run()
    assert result.success, describe(result)
    assert result.kscr == 1.0, describe(result)
    assert result.failure is None
    kinds = set(result.tool_calls_by_kind)
    assert kinds <= ({"gui"} if mode == "gui" else {"mcp", "gui"}), kinds
    assert result.steps == sum(s.is_action for s in TASKS[key].task.oracle_for(mode))


READY = sorted(k for k, rt in TASKS.items() if rt.task.status == "ready")


@pytest.mark.parametrize("key", READY, ids=READY)
async def test_null_agent_fails(key, tmp_path):
    mode = TASKS[key].task.modes[-1]
    result = await Trial(TASKS[key], make_agent("null"), TrialOptions(mode=mode), tmp_path / "trial").run()
    assert not result.success, "the null agent passed: the task's checks do not depend on the agent's work"
    assert result.failure == "evaluated_failed", describe(result)
    assert result.kscr < 1.0
