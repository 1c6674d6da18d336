"""Versioned result models: one per trial (result.json) and the run summary (summary.json)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from evaluator.verdict import Verdict
from mcpworld.agents.base import Usage

RESULT_VERSION = 1

Failure = Literal["setup_error", "app_crash", "probe_error", "agent_error", "exec_timeout", "step_cap",
                  "evaluated_failed", "suspected_forgery"]


class Timings(BaseModel):
    open_s: float = 0.0        # the environment up: display and window manager (a container, for docker)
    reset_s: float = 0.0       # snapshot restore and the app's files
    app_ready_s: float = 0.0   # launch to window mapped and probe connected
    gateway_s: float = 0.0     # tool providers started (MCP servers connected)
    agent_s: float = 0.0
    query_s: float = 0.0
    teardown_s: float = 0.0
    total_s: float = 0.0


class TrialResult(BaseModel):
    v: int = RESULT_VERSION
    task: str
    template: int
    app: str
    mode: str
    no_bash: bool = False
    agent: str
    trial: int
    run_id: str
    difficulty: str
    human_steps: int | None
    success: bool
    kscr: float
    verdict: Verdict | None = None
    failure: Failure | None = None
    failure_detail: str = ""
    forgeries: int = 0
    steps: int = 0
    tool_calls: int = 0
    tool_calls_by_kind: dict[str, int] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)
    timings: Timings = Field(default_factory=Timings)
    started: float = 0.0


class TaskSummary(BaseModel):
    trials: int
    successes: int
    sr: float
    kscr: float


class RunSummary(BaseModel):
    v: int = RESULT_VERSION
    run_dir: str
    agent: str
    modes: list[str]
    no_bash: bool
    trials: int
    sr: float
    kscr: float
    per_task: dict[str, TaskSummary]
    per_mode: dict[str, TaskSummary]
    failures: dict[str, int]


def summarize(results: list[TrialResult], run_dir: str, agent: str, modes: list[str], no_bash: bool) -> RunSummary:
    def agg(rs: list[TrialResult]) -> TaskSummary:
        n = len(rs)
        s = sum(r.success for r in rs)
        return TaskSummary(trials=n, successes=s, sr=s / n if n else 0.0, kscr=sum(r.kscr for r in rs) / n if n else 0.0)

    per_task: dict[str, list[TrialResult]] = {}
    per_mode: dict[str, list[TrialResult]] = {}
    failures: dict[str, int] = {}
    for r in results:
        per_task.setdefault(f"{r.task}:{r.mode}", []).append(r)
        per_mode.setdefault(r.mode, []).append(r)
        if r.failure:
            failures[r.failure] = failures.get(r.failure, 0) + 1
    total = agg(results)
    return RunSummary(run_dir=run_dir, agent=agent, modes=modes, no_bash=no_bash, trials=total.trials, sr=total.sr,
                      kscr=total.kscr, per_task={k: agg(v) for k, v in per_task.items()},
                      per_mode={k: agg(v) for k, v in per_mode.items()}, failures=failures)
