"""Runs many trials (tasks x modes x trials), `parallel` environments at a time, into one run directory."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path

from gateway.modes import MODES
from mcpworld.admission import Admission, app_peak_mb
from mcpworld.concurrency import gather_all
from mcpworld.agents import make_agent
from mcpworld.config.load import ResolvedTask
from mcpworld.envs import LOCAL
from mcpworld.errors import MCPWorldError
from mcpworld.results import TrialResult
from mcpworld.resume import Resumed, mark_resumed
from mcpworld.rundir import RunDir
from mcpworld.trial import TrialOptions, run_trial

Planned = tuple[ResolvedTask, str, int]


def plan(tasks: list[ResolvedTask], modes: list[str], trials: int) -> list[Planned]:
    """Every (task, mode, trial) to run; modes a task does not declare and tasks not ready are skipped."""
    return [(rt, mode, k) for rt in tasks if rt.task.status == "ready"
            for mode in modes if mode in rt.task.modes for k in range(trials)]


def declared(tasks: list[ResolvedTask], backend: str, here: bool = True,
             app_build: Path | None = None) -> tuple[list[ResolvedTask], dict[str, dict]]:
    """The tasks that can run, and every chosen task with its status: what STRICT counts against.
    On the local backend a task whose app is not installed here is declared but not runnable (unless the
    trials run elsewhere: `here` False, a cluster's nodes say what they have); on either backend, so is a
    task whose hooks need its app's source build where none is here and no `app_build` is given (its set-up
    would fail: not the agent's failure, nor the testbed's)."""
    from mcpworld.install import is_installed
    from mcpworld.verify import lacks_build

    installed: dict[str, bool] = {}
    runnable, info = [], {}
    for rt in tasks:
        status, reason = rt.task.status, rt.task.status_reason
        if status == "ready" and backend == LOCAL and here:
            if rt.app.id not in installed:
                installed[rt.app.id] = is_installed(rt.app)
            if not installed[rt.app.id]:
                status, reason = "app_missing", f"{rt.app.name} is not installed (mcpworld apps install --app {rt.app.id})"
        if status == "ready" and here and app_build is None and lacks_build(rt):
            status, reason = "build_missing", (f"its hooks need {rt.app.name}'s source build "
                                               f"(mcpworld apps build {rt.app.id} --from-source, or --app-build)")
        if status == "ready":
            runnable.append(rt)
        info[rt.key] = {"status": status, "reason": reason, "modes": [str(m) for m in rt.task.modes or MODES],
                        "difficulty": rt.task.difficulty, "human_steps": rt.task.human_step_count,
                        "grouped_human_steps": rt.task.grouped_human_steps, "app": rt.app.id,
                        "template": rt.task.template}
    return runnable, info


async def run_all(tasks: list[ResolvedTask], modes: list[str], agent_name: str, out: Path, trials: int = 1,
                  base_opts: TrialOptions | None = None, agent_options: dict | None = None,
                  on_trial: Callable[[TrialResult, int, int], None] | None = None,
                  on_start: Callable[[str], None] | None = None, parallel: int | str = 1, resumed: Resumed | None = None,
                  executor=None):
    """Every planned trial, `parallel` environments at a time (each trial has its own display, ports,
    home and evaluator, so they share nothing but the machine); the run's report. With `resumed` (the
    run directory settled by mcpworld.resume), the trials it finished are not run again. With an `executor`
    (mcpworld.ray_executor.RayExecutor) each trial runs where it sends it and comes back into the run
    directory; a trial it loses is not recorded, and the run ends with an error naming it."""
    base_opts = base_opts or TrialOptions()
    run = RunDir(out)
    out.mkdir(parents=True, exist_ok=True)
    tasks, declared_tasks = declared(tasks, base_opts.backend, here=executor is None, app_build=base_opts.app_build)
    todo = plan(tasks, modes, trials)
    if resumed is not None:
        todo = [(rt, mode, k) for rt, mode, k in todo if (rt.key, mode, k) not in resumed.finished]
        mark_resumed(run, resumed)
    else:
        run.run_json.write_text(json.dumps({
            "v": 1, "started": time.time(), **run_config(agent_name, agent_options, modes, trials, base_opts),
            "parallel": parallel, "executor": "local" if executor is None else "ray",
            "declared": declared_tasks, "tasks": {rt.key: rt.raw for rt in tasks}}, indent=1, default=str))
    gate = Gate(parallel)
    done, lost = 0, []
    with open(run.results_jsonl, "a") as results_log:
        async def one(rt: ResolvedTask, mode: str, k: int) -> None:
            nonlocal done
            async with gate.slot(rt):
                if on_start:
                    on_start(f"{rt.key} {mode} #{k}")
                opts = dataclasses.replace(base_opts, mode=mode, view_file=run.view)
                trial_dir = run.trial(rt.app.id, rt.key, mode, k).path
                if executor is None:
                    agent = make_agent(agent_name, **(agent_options or {}))
                    result = await run_trial(rt, agent, opts, trial_dir, k)
                else:
                    try:
                        result = await executor(rt, mode, k, opts, agent_name, agent_options or {}, trial_dir)
                    except MCPWorldError as e:
                        lost.append(str(e))
                        return
            results_log.write(result.model_dump_json() + "\n")
            results_log.flush()
            done += 1
            if on_trial:
                on_trial(result, done, len(todo))

        await gather_all(*(one(rt, mode, k) for rt, mode, k in todo))
    if gate.admission is not None:
        (out / "admission.json").write_text(json.dumps({"rule": "mcpworld.admission.admit", "most": gate.admission.most,
                                                        "decisions": gate.admission.log}, indent=1))
    summary = write_summary(out)
    if lost:
        raise MCPWorldError(f"{len(lost)} trial(s) were not recorded (`mcpworld run --resume {out}` runs them): "
                            + "; ".join(lost))
    return summary


class Gate:
    """How many trials run at once: `parallel` at a time, or with "auto" as many as the machine has room for
    (mcpworld.admission)."""

    def __init__(self, parallel: int | str):
        self.admission = Admission() if parallel == "auto" else None
        self._sem = None if self.admission else asyncio.Semaphore(max(1, int(parallel)))

    @contextlib.asynccontextmanager
    async def slot(self, rt: ResolvedTask):
        if self.admission is None:
            async with self._sem:
                yield
            return
        await self.admission.acquire(app_peak_mb(rt.app.folder))
        try:
            yield
        finally:
            self.admission.release()


def run_config(agent_name: str, agent_options: dict | None, modes: list[str], trials: int, opts: TrialOptions) -> dict:
    """What run.json records of the configuration (mcpworld.resume.CONFIG: a resumed run must match it)."""
    return {"agent": agent_name, "agent_options": agent_options or {}, "modes": modes, "trials": trials,
            "no_bash": opts.no_bash, "tools": sorted(opts.tools) if opts.tools else None,
            "count_api_in_gui": opts.count_api_in_gui, "timeout": opts.timeout, "max_steps": opts.max_steps,
            "backend": opts.backend, "desktop": opts.desktop}


def write_summary(run_dir: Path):
    """summary.json: the full report (mcpworld.report.build) of the run as it stands on disk."""
    from mcpworld.report.build import build, load_runs

    report = build(*load_runs([run_dir]))
    RunDir(run_dir).summary.write_text(report.model_dump_json(indent=2))
    return report
