"""Runs many trials (tasks x modes x trials), with a progress bar, into one run directory."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path

from mcpworld.agents import make_agent
from mcpworld.config.load import ResolvedTask
from mcpworld.results import RunSummary, TrialResult, summarize
from mcpworld.trial import Trial, TrialOptions


def plan(tasks: list[ResolvedTask], modes: list[str], trials: int) -> list[tuple[ResolvedTask, str, int]]:
    """Every (task, mode, trial) to run; modes a task does not declare are skipped."""
    return [(rt, mode, k) for rt in tasks for mode in modes if mode in rt.task.modes for k in range(trials)]


def trial_dirname(rt: ResolvedTask, mode: str, k: int) -> str:
    return f"{rt.app.id}-{rt.task.id}__{mode}__{k}"


async def run_all(tasks: list[ResolvedTask], modes: list[str], agent_name: str, out: Path, trials: int = 1,
                  base_opts: TrialOptions | None = None, agent_options: dict | None = None,
                  on_trial: Callable[[TrialResult, int, int], None] | None = None,
                  on_start: Callable[[str], None] | None = None) -> RunSummary:
    base_opts = base_opts or TrialOptions()
    out.mkdir(parents=True, exist_ok=True)
    todo = plan(tasks, modes, trials)
    (out / "run.json").write_text(json.dumps({
        "v": 1, "started": time.time(), "agent": agent_name, "agent_options": agent_options or {}, "modes": modes,
        "trials": trials, "no_bash": base_opts.no_bash, "tools": sorted(base_opts.tools) if base_opts.tools else None,
        "timeout": base_opts.timeout, "backend": base_opts.backend,
        "tasks": {rt.key: rt.raw for rt in tasks}}, indent=1, default=str))
    results: list[TrialResult] = []
    with open(out / "results.jsonl", "a") as results_log:
        for i, (rt, mode, k) in enumerate(todo):
            if on_start:
                on_start(f"{rt.key} {mode} #{k}")
            opts = dataclasses.replace(base_opts, mode=mode, view_file=out / "view.json")
            agent = make_agent(agent_name, **(agent_options or {}))
            result = await Trial(rt, agent, opts, out / "trials" / trial_dirname(rt, mode, k), k).run()
            results.append(result)
            results_log.write(result.model_dump_json() + "\n")
            results_log.flush()
            if on_trial:
                on_trial(result, i + 1, len(todo))
    summary = summarize(results, str(out), agent_name, modes, base_opts.no_bash)
    (out / "summary.json").write_text(summary.model_dump_json(indent=2))
    return summary


def load_results(run_dir: Path) -> list[TrialResult]:
    """Every trial result in a run directory (also for a run that was killed midway)."""
    out = []
    for f in sorted((run_dir / "trials").glob("*/result.json")):
        out.append(TrialResult.model_validate_json(f.read_text()))
    return out
