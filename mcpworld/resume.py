"""Resuming a run that was killed or interrupted (`mcpworld run --resume RUNDIR`).

A trial is finished when results.jsonl has a complete line for it and its folder has its result.json,
and it was not interrupted (Ctrl-C or a time limit stops a run with its running trials' results saying
so): finished trials are kept. Any other trial folder (a trial cut off while it ran, or one whose line was
never written) is moved to <run>/set_aside/ with a note saying why, and the trial runs again. The run
resumes under the configuration it started with (run.json): a different agent, mode, option or task
content would mix two experiments in one report, so it is refused with what differs. With --rerun-testbed,
a trial that failed on the testbed's side (mcpworld.results.TESTBED_FAILURES) is set aside the same way and
runs again: the report then holds the new trial, and counts the rerun.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field

from mcpworld.errors import MCPWorldError
from mcpworld.results import Failure, TrialResult, failed_on_testbed
from mcpworld.rundir import RunDir, TrialDir

# what run.json records of the run's configuration, compared on --resume (parallel is not: it changes speed,
# not results)
CONFIG = ("agent", "agent_options", "modes", "trials", "no_bash", "tools", "count_api_in_gui", "timeout", "max_steps",
          "backend", "desktop")
SET_ASIDE = "set_aside"
NOTE = "SET_ASIDE.txt"

TrialKey = tuple[str, str, int]  # task, mode, trial


@dataclass
class Resumed:
    finished: set[TrialKey] = field(default_factory=set)
    set_aside: list[str] = field(default_factory=list)   # folder names moved under set_aside/
    rerun_testbed: list[str] = field(default_factory=list)  # of those, the testbed's failures run again
    torn_lines: int = 0                                   # results.jsonl lines that were cut off or had no folder


def config_differences(stored: dict, now: dict) -> list[str]:
    """What differs between the configuration a run started with and the one asked for now."""
    return [f"{k}: {stored.get(k)!r} when the run started, {now.get(k)!r} now" for k in CONFIG
            if k in now and stored.get(k) != now[k]]


def task_differences(stored_tasks: dict[str, dict], tasks_now: dict) -> list[str]:
    """Tasks of the run that are gone or whose configuration changed since it started."""
    out = []
    for key, raw in stored_tasks.items():
        rt = tasks_now.get(key)
        if rt is None:
            out.append(f"task {key}: no longer exists")
        elif rt.raw != raw:
            out.append(f"task {key}: its task.json changed since the run started")
    return out


def settle(run: RunDir, rerun_testbed: bool = False) -> Resumed:
    """Keep what the run finished, set aside what it left half done (and with `rerun_testbed`, what failed on
    the testbed's side), and make results.jsonl hold exactly one complete line per kept trial."""
    if not run.run_json.exists():
        raise MCPWorldError(f"{run.path} is not a run directory (it has no run.json)")
    state = Resumed()
    kept: dict[TrialKey, str] = {}
    names: set[str] = set()
    if run.results_jsonl.exists():
        for line in run.results_jsonl.read_text().splitlines():
            try:
                result = TrialResult.model_validate_json(line)
            except ValueError:  # a line cut off when the run was killed
                state.torn_lines += 1
                continue
            key = (result.task, result.mode, result.trial)
            if key in kept:
                continue
            if result.failure == Failure.INTERRUPTED:  # stopped by Ctrl-C or a time limit: it runs again
                continue
            if rerun_testbed and failed_on_testbed(result):
                state.rerun_testbed.append(run.trial_of(result).name)
                continue
            if run.trial_of(result).result.exists():
                kept[key] = line
                names.add(run.trial_of(result).name)
            else:
                state.torn_lines += 1
    state.finished = set(kept)
    if run.trials.is_dir():
        for folder in sorted(p for p in run.trials.iterdir() if p.is_dir() and p.name not in names):
            state.set_aside.append(_set_aside(run, folder, rerun=folder.name in state.rerun_testbed))
    tmp = run.results_jsonl.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(line + "\n" for line in kept.values()))
    os.replace(tmp, run.results_jsonl)
    return state


def _set_aside(run: RunDir, folder, rerun: bool) -> str:
    aside = run.path / SET_ASIDE
    aside.mkdir(exist_ok=True)
    target = aside / folder.name
    n = 1
    while target.exists():
        n += 1
        target = aside / f"{folder.name}.{n}"
    result = TrialDir(folder).load_result() if (folder / "result.json").exists() else None
    why = ("the trial did not finish (no result.json)" if result is None
           else "the run was stopped while the trial ran (its result says interrupted)"
           if result.failure == Failure.INTERRUPTED
           else f"it failed on the testbed's side ({result.failure}: {result.failure_detail[:300]}) and "
                "--rerun-testbed asked for it again" if rerun
           else "its result.json was written but its line in results.jsonl was not")
    os.replace(folder, target)
    (target / NOTE).write_text(f"set aside by `mcpworld run --resume` at {time.strftime('%Y-%m-%d %H:%M:%S')}: "
                               f"{why}; the trial ran again in trials/{folder.name}\n")
    return target.name


def mark_resumed(run: RunDir, state: Resumed) -> None:
    """Note the resumption in run.json (the configuration itself stays as the run started)."""
    meta = json.loads(run.run_json.read_text())
    meta.setdefault("resumed", []).append({"at": time.time(), "kept": len(state.finished),
                                           "set_aside": state.set_aside, "rerun_testbed": state.rerun_testbed,
                                           "torn_lines": state.torn_lines})
    run.run_json.write_text(json.dumps(meta, indent=1, default=str))
