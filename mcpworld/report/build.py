"""From run directories to one Report: every metric of summary.json, computed by mcpworld.metrics.

Trials are the unit of SR, KSCR and WES (n = trials; with one trial per task that is n = tasks);
IMPLEMENTED/STRICT and pass@k/pass^k are per task. Every figure is per mode first, since a mode
is an experimental condition, then overall. A trial that failed on the testbed's side (set-up, an app
crash, a probe, the machine out of memory: mcpworld.results.TESTBED_FAILURES) is in none of these
figures, only in the testbed's own count and the cost; `mcpworld run --resume --rerun-testbed` reruns it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from gateway.modes import MODES, Kind
from mcpworld import metrics
from mcpworld.report.prices import Price, load_prices, price_for
from mcpworld.results import TrialResult, failed_on_testbed
from mcpworld.rundir import RunDir

REPORT_VERSION = 5
DIFFICULTIES = ("Easy", "Medium", "Hard")
KINDS = tuple(str(k) for k in (Kind.GUI, Kind.MCP, Kind.BASH, Kind.EDIT))


class Group(BaseModel):
    """SR with its 95% Wilson interval, KSCR (mean over trials) and KSCR by progress."""

    trials: int
    successes: int
    tasks: int
    sr: float
    sr_low: float
    sr_high: float
    kscr: float
    kscr_progress: float


class Wes(BaseModel):
    value: float
    grouped: float = Field(description="the same with grouped human steps where a task declares them")
    step_cap: int = Field(description="S in the penalty term")
    step_cap_source: str
    grouped_tasks: int = Field(description="tasks that declare grouped human steps")


class ImplementedStrict(BaseModel):
    """Two denominators for STRICT. `strict` counts the tasks that declare the mode (a mode a task cannot be
    done in is left out); `strict_all` counts every chosen task, one the mode cannot do as a failure, as the
    MCPWorld paper's Tables 6 and 9 do (it ran every task in every mode)."""

    passed: float = Field(description="sum over runnable tasks of the task's SR (a count with one trial per task)")
    runnable: int
    declared: int = Field(description="chosen tasks that declare this mode")
    implemented: float
    strict: float = Field(description="passed / declared")
    chosen: int = Field(default=0, description="every chosen task, whatever modes it declares")
    strict_all: float = Field(default=0.0, description="passed / chosen: the paper's denominator")
    not_runnable: dict[str, str] = Field(default_factory=dict, description="task -> status: reason")
    not_declared: list[str] = Field(default_factory=list, description="chosen tasks that do not declare this mode")


class PassK(BaseModel):
    k: int
    tasks: int
    pass_at_k: float
    pass_hat_k: float


class Cost(BaseModel):
    trials: int
    steps: int
    steps_mean: float
    tool_calls: int
    tool_calls_by_kind: dict[str, int]
    tool_calls_by_tool: dict[str, int]
    mcp_rate: float = Field(description="MCP tool calls over all tool calls")
    input_tokens: int
    output_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    wall_s: float
    wall_s_mean: float
    agent_s_mean: float
    models: list[str]
    dollars: float | None = Field(description="None when a trial's model has no price in the table")
    api_retries: int = Field(0, description="requests to the model's API sent again (rate limits, server errors)")
    bad_tool_calls: int = Field(0, description="tool calls with malformed arguments or an unknown tool name")


class TrialRow(BaseModel):
    task: str
    app: str
    mode: str
    no_bash: bool
    trial: int
    difficulty: str
    measured_difficulty: str = Field(default="Unknown", description="by the paper's rule on the GUI steps")
    human_steps: int | None
    success: bool
    kscr: float
    kscr_progress: float
    steps: int
    tool_calls: int
    failure: str | None
    failure_detail: str
    testbed_failure: bool = Field(False, description="failed on the testbed's side: in no figure but the cost")
    wall_s: float
    input_tokens: int
    output_tokens: int
    dir: str


class Report(BaseModel):
    v: int = REPORT_VERSION
    runs: list[str]
    agent: str
    modes: list[str]
    no_bash: bool
    # the first-level figures of the earlier summary.json, kept for scripts reading them
    trials: int
    sr: float
    kscr: float
    overall: Group
    per_mode: dict[str, Group]
    per_app: dict[str, Group]
    per_difficulty: dict[str, Group]
    per_mode_difficulty: dict[str, dict[str, Group]] = Field(description="by the task's label (Appendix E)")
    per_mode_measured_difficulty: dict[str, dict[str, Group]] = Field(
        default_factory=dict, description="by the paper's rule (GUI steps 0-5, 5-10, 10+) on the measured GUI steps")
    relabelled: dict[str, list[str]] = Field(default_factory=dict,
                                             description="task -> [label, measured] where they differ")
    per_task: dict[str, Group] = Field(description="'task:mode'")
    wes: dict[str, Wes]
    implemented_strict: dict[str, ImplementedStrict]
    pass_k: dict[str, list[PassK]]
    cost: dict[str, Cost] = Field(description="per mode and 'all'")
    prices: dict[str, Price]
    failures: dict[str, int]
    failures_by_mode: dict[str, dict[str, int]]
    channels: dict[str, dict[str, int]] = Field(default_factory=dict, description="mode -> key steps reached, by "
                                                "the channel the app saw them done through (gui, api, unknown)")
    sr_gui_only: dict[str, float] = Field(default_factory=dict, description="mode -> SR with a success that rests "
                                          "on a key step done through the app's API in gui mode counted as a failure")
    setup_restarts: int = Field(0, description="trials started afresh because the app crashed while starting")
    testbed_failures: dict[str, int] = Field(default_factory=dict, description="category -> trials that failed on "
                                             "the testbed's side, kept out of every figure but the cost")
    testbed_trials: list[str] = Field(default_factory=list, description="'task:mode#trial' of those trials")
    testbed_reruns: int = Field(0, description="trials run again by --resume --rerun-testbed (set aside first)")
    trial_rows: list[TrialRow]


def kscr_progress(r: TrialResult) -> float:
    if r.verdict is None:
        return 0.0
    return metrics.kscr_by_progress([s.reached for s in r.verdict.key_steps])


def group(rs: list[TrialResult]) -> Group:
    n, s = len(rs), sum(r.success for r in rs)
    low, high = metrics.wilson_interval(s, n)
    return Group(trials=n, successes=s, tasks=len({r.task for r in rs}), sr=metrics.rate(s, n), sr_low=low,
                 sr_high=high, kscr=sum(r.kscr for r in rs) / n if n else 0.0,
                 kscr_progress=sum(kscr_progress(r) for r in rs) / n if n else 0.0)


def by(rs: Iterable[TrialResult], key: Callable[[TrialResult], str]) -> dict[str, list[TrialResult]]:
    out: dict[str, list[TrialResult]] = {}
    for r in rs:
        out.setdefault(key(r), []).append(r)
    return out


def wes(rs: list[TrialResult], step_cap: int | None) -> Wes:
    if step_cap is not None:
        cap, source = step_cap, "--step-cap"
    else:
        caps = {r.max_steps for r in rs if r.max_steps}
        cap = max(caps) if caps else 50
        source = ("the trials' step cap" if len(caps) == 1 else
                  "the largest of the trials' step caps" if caps else "the default (no trial recorded one)")

    def cases(grouped: bool) -> list[metrics.EfficiencyCase]:
        out = []
        for r in rs:
            human = r.grouped_human_steps if grouped and r.grouped_human_steps else r.human_steps
            out.append(metrics.EfficiencyCase(reward=1.0 if r.success else 0.0, human_steps=human or 0,
                                              agent_steps=r.steps))
        return out

    return Wes(value=metrics.wes(cases(False), cap), grouped=metrics.wes(cases(True), cap), step_cap=cap,
               step_cap_source=source, grouped_tasks=len({r.task for r in rs if r.grouped_human_steps}))


def status_reason(d: dict) -> str:
    """A declared task's "status: reason" (a not runnable one's line in the report and the CLI)."""
    return f"{d['status']}: {d.get('reason', '')}".rstrip(": ")


# the rerun command is printed once, with the testbed failures (testbed_lines)
TESTBED_ONLY = {"status": "testbed_failure", "reason": "no trial judged: each failed on the testbed's side"}


def implemented_strict(rs: list[TrialResult], mode: str, declared: dict[str, dict],
                       testbed_only: frozenset[str] = frozenset()) -> ImplementedStrict:
    """`testbed_only`: tasks whose trials in this mode all failed on the testbed's side: not measured, so
    not runnable here (STRICT counts them as failures, as it does every task that could not run)."""
    task_sr = {t: metrics.rate(sum(r.success for r in g), len(g)) for t, g in by(rs, lambda r: r.task).items()}
    chosen = declared or {t: {"status": "ready", "modes": [mode]} for t in {*task_sr, *testbed_only}}
    chosen = {k: {**d, **TESTBED_ONLY} if k in testbed_only and d.get("status") == "ready" else d
              for k, d in chosen.items()}
    in_mode = {k: d for k, d in chosen.items() if mode in d.get("modes", [])}
    runnable = [k for k, d in in_mode.items() if d.get("status") == "ready"]
    passed = sum(task_sr.get(k, 0.0) for k in runnable)
    impl, strict = metrics.implemented_strict(passed, len(runnable), len(in_mode))
    return ImplementedStrict(passed=passed, runnable=len(runnable), declared=len(in_mode), implemented=impl, strict=strict,
                             chosen=len(chosen), strict_all=metrics.rate(passed, len(chosen)),
                             not_runnable={k: status_reason(d) for k, d in in_mode.items() if d.get("status") != "ready"},
                             not_declared=sorted(k for k in chosen if k not in in_mode))


def not_runnable_lines(not_runnable: dict[str, str], shown: int = 4) -> list[str]:
    """One line per reason: "16 tasks (zotero/1, zotero/2, ... and 12 more): declared: <why>"."""
    groups: dict[str, list[str]] = {}
    for key, why in not_runnable.items():
        groups.setdefault(why, []).append(key)
    lines = []
    for why, keys in groups.items():
        named = ", ".join(keys[:shown]) + (f" and {len(keys) - shown} more" if len(keys) > shown else "")
        lines.append(f"{len(keys)} task{'s' if len(keys) > 1 else ''} ({named}): {why}")
    return lines


def testbed_lines(rep: Report, shown: int = 6) -> list[str]:
    """The trials that failed on the testbed's side, kept out of SR, and how to run them again."""
    if not rep.testbed_failures:
        return [f"testbed failures: none left ({rep.testbed_reruns} trial(s) rerun after one)"] if rep.testbed_reruns else []
    n = sum(rep.testbed_failures.values())
    named = ", ".join(rep.testbed_trials[:shown]) + (f" and {n - shown} more" if n > shown else "")
    return [f"testbed failures, in no figure above but the cost: {n} trial(s) "
            f"({', '.join(f'{k} {v}' for k, v in rep.testbed_failures.items())}): {named}"
            + (f"; {rep.testbed_reruns} rerun before" if rep.testbed_reruns else ""),
            f"run them again: mcpworld run --resume {rep.runs[0] if len(rep.runs) == 1 else 'RUN'} --rerun-testbed"]


def pass_k(rs: list[TrialResult]) -> list[PassK]:
    per_task = by(rs, lambda r: r.task)
    kmax = min(len(g) for g in per_task.values()) if per_task else 0
    out = []
    for k in sorted({k for k in (1, 2, 3, 5, 10, kmax) if k <= kmax}):
        at = [metrics.pass_at_k(len(g), sum(r.success for r in g), k) for g in per_task.values()]
        hat = [metrics.pass_hat_k(len(g), sum(r.success for r in g), k) for g in per_task.values()]
        out.append(PassK(k=k, tasks=len(per_task), pass_at_k=sum(at) / len(at), pass_hat_k=sum(hat) / len(hat)))
    return out


def cost(rs: list[TrialResult], prices: dict[str, Price]) -> Cost:
    n = len(rs)
    by_kind: dict[str, int] = {}
    by_tool: dict[str, int] = {}
    for r in rs:
        for k, v in r.tool_calls_by_kind.items():
            by_kind[k] = by_kind.get(k, 0) + v
        for k, v in r.tool_calls_by_tool.items():
            by_tool[k] = by_tool.get(k, 0) + v
    calls = sum(r.tool_calls for r in rs)
    dollars: float | None = 0.0
    for r in rs:
        u = r.usage
        if not (u.input_tokens or u.output_tokens):
            continue
        price = price_for(prices, u.model)
        if price is None or dollars is None:
            dollars = None
            continue
        dollars += price.dollars(u.input_tokens, u.output_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens)
    wall = sum(r.timings.total_s for r in rs)
    return Cost(trials=n, steps=sum(r.steps for r in rs), steps_mean=sum(r.steps for r in rs) / n if n else 0.0,
                tool_calls=calls, tool_calls_by_kind=dict(sorted(by_kind.items())),
                tool_calls_by_tool=dict(sorted(by_tool.items(), key=lambda kv: -kv[1])),
                mcp_rate=metrics.rate(by_kind.get(Kind.MCP, 0), calls),
                input_tokens=sum(r.usage.input_tokens for r in rs), output_tokens=sum(r.usage.output_tokens for r in rs),
                cache_write_tokens=sum(r.usage.cache_creation_input_tokens for r in rs),
                cache_read_tokens=sum(r.usage.cache_read_input_tokens for r in rs),
                wall_s=wall, wall_s_mean=wall / n if n else 0.0,
                agent_s_mean=sum(r.timings.agent_s for r in rs) / n if n else 0.0,
                models=sorted({r.usage.model for r in rs if r.usage.model}), dollars=dollars,
                api_retries=sum(r.usage.api_retries for r in rs), bad_tool_calls=sum(r.usage.bad_tool_calls for r in rs))


def trial_row(r: TrialResult, run_dir: str) -> TrialRow:

    return TrialRow(task=r.task, app=r.app, mode=r.mode, no_bash=r.no_bash, trial=r.trial, difficulty=r.difficulty,
                    measured_difficulty=metrics.difficulty(r.human_steps), human_steps=r.human_steps, success=r.success, kscr=r.kscr, kscr_progress=kscr_progress(r),
                    steps=r.steps, tool_calls=r.tool_calls, failure=r.failure, failure_detail=r.failure_detail,
                    testbed_failure=failed_on_testbed(r),
                    wall_s=r.timings.total_s, input_tokens=r.usage.input_tokens, output_tokens=r.usage.output_tokens,
                    dir=str(RunDir(Path(run_dir)).trial_of(r).path))


def build(results: list[tuple[str, TrialResult]], metas: list[dict], step_cap: int | None = None,
          prices: dict[str, Price] | None = None) -> Report:
    """results: (run directory, trial result) pairs; metas: each run's run.json."""
    prices = prices if prices is not None else load_prices()
    every = [r for _, r in results]
    rs = [r for r in every if not failed_on_testbed(r)]  # the trials that judge the agent
    testbed = [r for r in every if failed_on_testbed(r)]
    declared: dict[str, dict] = {}
    for m in metas:
        declared.update(m.get("declared") or {})
    modes = sorted({r.mode for r in every}, key=lambda m: MODES.index(m) if m in MODES else len(MODES))
    modes = modes or sorted({m for meta in metas for m in meta.get("modes", [])})
    per_mode = by(rs, lambda r: r.mode)
    every_by_mode = by(every, lambda r: r.mode)  # what each mode cost, the testbed's failures too
    judged = {(r.task, r.mode) for r in rs}
    testbed_only = {m: frozenset(r.task for r in testbed if r.mode == m and (r.task, m) not in judged) for m in modes}
    failures: dict[str, int] = {}
    failures_by_mode: dict[str, dict[str, int]] = {}
    for r in every:
        if r.failure:
            failures[r.failure] = failures.get(r.failure, 0) + 1
            fm = failures_by_mode.setdefault(r.mode, {})
            fm[r.failure] = fm.get(r.failure, 0) + 1
    channels: dict[str, dict[str, int]] = {}
    for r in rs:
        for step in r.verdict.key_steps if r.verdict else []:
            if step.reached:
                c = channels.setdefault(r.mode, {})
                c[step.channel or "unknown"] = c.get(step.channel or "unknown", 0) + 1
    overall = group(rs)
    agents = sorted({r.agent for r in every} | {m.get("agent", "?") for m in metas if not every})
    return Report(
        runs=[str(Path(m.get("_dir", "?"))) for m in metas], agent=",".join(agents) or "?", modes=modes,
        no_bash=any(r.no_bash for r in every) or any(m.get("no_bash") for m in metas),
        trials=overall.trials, sr=overall.sr, kscr=overall.kscr, overall=overall,
        per_mode={m: group(per_mode[m]) for m in modes if m in per_mode},
        per_app={a: group(g) for a, g in sorted(by(rs, lambda r: r.app).items())},
        per_difficulty={d: group(g) for d, g in sorted(by(rs, lambda r: r.difficulty).items(),
                                                       key=lambda kv: _difficulty_order(kv[0]))},
        per_mode_difficulty={m: by_difficulty(per_mode[m], lambda r: r.difficulty) for m in modes if m in per_mode},
        per_mode_measured_difficulty={m: by_difficulty(per_mode[m], lambda r: metrics.difficulty(r.human_steps))
                                      for m in modes if m in per_mode},
        relabelled={r.task: [r.difficulty, metrics.difficulty(r.human_steps)] for r in sorted(rs, key=lambda r: r.task)
                    if r.difficulty != metrics.difficulty(r.human_steps)},
        per_task={k: group(g) for k, g in by(rs, lambda r: f"{r.task}:{r.mode}").items()},
        wes={m: wes(per_mode[m], step_cap) for m in modes if m in per_mode},
        implemented_strict={m: implemented_strict(per_mode.get(m, []), m, declared, testbed_only[m]) for m in modes},
        pass_k={m: pass_k(per_mode[m]) for m in modes if m in per_mode},
        cost={**{m: cost(every_by_mode[m], prices) for m in modes if m in every_by_mode}, "all": cost(every, prices)},
        prices={r.usage.model: p for r in every if (p := price_for(prices, r.usage.model)) is not None},
        failures=failures, failures_by_mode=failures_by_mode, channels=channels,
        setup_restarts=sum(r.setup_attempts - 1 for r in every),
        testbed_failures={k: len(g) for k, g in sorted(by(testbed, lambda r: str(r.failure)).items())},
        testbed_trials=[f"{r.task}:{r.mode}#{r.trial}" for r in testbed],
        testbed_reruns=sum(len(x.get("rerun_testbed", [])) for m in metas for x in m.get("resumed", [])),
        sr_gui_only={m: sum(r.success and not (r.verdict and r.verdict.mode_violation) for r in per_mode[m]) / len(per_mode[m])
                     for m in modes if m in per_mode},
        trial_rows=[trial_row(r, d) for d, r in results])


def by_difficulty(rs: list[TrialResult], key: Callable[[TrialResult], str]) -> dict[str, Group]:
    return {d: group(g) for d, g in sorted(by(rs, key).items(), key=lambda kv: _difficulty_order(kv[0]))}


def _difficulty_order(d: str) -> int:
    return DIFFICULTIES.index(d) if d in DIFFICULTIES else len(DIFFICULTIES)


def load_runs(run_dirs: list[Path]) -> tuple[list[tuple[str, TrialResult]], list[dict]]:
    """Every trial result of the runs (also of a run killed midway) and each run's run.json."""
    results, metas = [], []
    for d in run_dirs:
        run = RunDir(Path(d))
        meta = run.meta()
        meta["_dir"] = str(d)
        metas.append(meta)
        results.extend((str(d), r) for r in run.results())
    return results, metas
