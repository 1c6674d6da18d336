"""Record which window has the focus after each step of a task's GUI oracle, and write it into the task.

A recorded name becomes the step's `window`: the oracle then waits for that window before its next
step, instead of trusting a fixed pause to cover a dialog's opening on a loaded machine."""

from __future__ import annotations

import json
import re
from pathlib import Path

from gateway.modes import Mode
from mcpworld.agents.base import AgentContext
from mcpworld.agents.simple import OracleAgent
from mcpworld.config.load import ResolvedTask
from mcpworld.trial import Trial, TrialOptions


class _Recorder(OracleAgent):
    """The oracle, noting the focused window after each step (the computer tool has let the screen settle).
    It waits for no recorded window: this records what happens, not what was expected."""

    wait_for_windows = False

    def __init__(self) -> None:
        super().__init__()
        self.windows: list[str | None] = []

    async def after_step(self, ctx: AgentContext, index: int, step) -> None:
        self.windows.append(ctx.env.active_window_name())


def window_pattern(name: str | None, before: str | None, main_window: str, params: dict) -> str | None:
    """The pattern to wait for after a step that opened a window (the focus moved to a window other than
    the app's main one): its exact name, with parameter values turned back into their placeholders.

    None for every other step. Where the focus goes when a dialog closes is up to the window manager
    (xfwm4 sometimes hands it to the main window rather than the parent dialog), so that is not waited for."""
    if name is None or name == before or re.search(main_window, name):
        return None
    text = re.escape(name).replace("\\ ", " ").replace("{", "{{").replace("}", "}}")
    for key, value in sorted(params.items(), key=lambda kv: -len(str(kv[1]))):
        if isinstance(value, str) and len(value) >= 3:
            text = text.replace(re.escape(value), "{" + key + "}")
    return f"^{text}$"


async def record(rt: ResolvedTask, trial_dir: Path) -> list[str | None]:
    """Run the task's GUI oracle once (the trial's files go to trial_dir); the pattern to wait for after each step."""
    agent = _Recorder()
    result = await Trial(rt, agent, TrialOptions(mode=Mode.GUI), trial_dir).run()
    if not result.success:
        raise RuntimeError(f"{rt.key}: the GUI oracle failed while recording ({result.failure}: "
                           f"{result.failure_detail}); see {trial_dir}")
    befores = [None, *agent.windows[:-1]]
    return [window_pattern(n, b, rt.app.ready.window_name, rt.task.params) for n, b in zip(agent.windows, befores)]


def write(rt: ResolvedTask, patterns: list[str | None]) -> Path:
    """Store the patterns as the `window` of each GUI oracle step in the task's file (the rest untouched)."""
    path = rt.folder / "task.json"
    data = json.loads(path.read_text())
    steps = data["oracle"][Mode.GUI]
    if len(steps) != len(patterns):
        raise RuntimeError(f"{path}: {len(steps)} GUI oracle steps but {len(patterns)} recorded windows")
    for step, pattern in zip(steps, patterns):
        step.pop("window", None)
        if pattern is not None:
            step["window"] = pattern
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return path
