"""Every ready task stays proven: its content has a passing `mcpworld tasks verify` record (every declared
mode's oracle passed, the null agent failed), and CI re-proves part of it on every run with the code
as it is now: every task's null agent, every task's fastest declared oracle, the GUI oracles of tasks
re-verified in the newest record change, and a fixed-seed sample of the other GUI oracles; near misses
of the tasks whose near misses changed last and of a fixed-seed sample of the others
(mcpworld.verify.ci_plan); one recorded killed mutant of a fixed-seed sample of tasks per app. The
oracles of the other modes, the other near misses and the other mutants are covered by the records alone.

These are real trials: Xvfb, xfwm4, the real app with its probe or hooks, the real MCP server, the
evaluator over websockets; $MCPWORLD_TEST_PARALLEL (default 2) of them side by side.
"""

import asyncio
import os
import warnings

import pytest

from mcpworld.config.load import load_tasks
from mcpworld.install import app_version
from mcpworld.envs import LOCAL
from mcpworld.results import VERDICT_FAILURES
from mcpworld.rundir import RunDir
from mcpworld.verify import (CHANGED_NEAR_MISS_CAP, MUTANT_SAMPLE, NEAR_MISS_SAMPLE, TaskRecord, TrialProof, changed_in_last_verification, ci_plan, expected_to_pass, lacks_build, load_records, plan_seconds,
                             proves, run_job, stale)

TASKS = load_tasks()
READY = sorted(k for k, rt in TASKS.items() if rt.task.status == "ready")
PLAN = ci_plan(TASKS)


def describe(result):
    steps = ", ".join(f"{s.id}={'y' if s.reached else 'n'}" for s in result.verdict.key_steps)
    return f"{result.failure}: {result.failure_detail} [{steps}]"


def test_every_ready_task_is_proven_at_its_current_content():
    """A task, snapshot, hook or app version changed without `mcpworld tasks verify` (locally, in every
    declared mode, and in a container) cannot land."""
    versions = {rt.app.id: app_version(rt.app) for rt in TASKS.values()}
    records = {app: load_records(app) for app in versions}
    unproven = {k: stale(TASKS[k], records[TASKS[k].app.id], versions[TASKS[k].app.id], in_container=True)
                for k in READY}
    unproven = {k: why for k, why in unproven.items() if why}
    assert not unproven, ("run `mcpworld tasks verify --stale` (and `--backend docker --stale`) and commit "
                          f"tasks/*/verified.json: {unproven}")


def test_the_ci_plan_covers_every_task_with_a_null_and_an_oracle_and_samples_near_misses():
    """...but those that need a source build where there is none (their records prove them)."""
    runnable = {k for k in READY if not lacks_build(TASKS[k])}
    assert {k for k, _, a in PLAN if a == "null"} == runnable
    assert {k for k, _, a in PLAN if a == "oracle"} >= runnable
    assert any(m == "gui" for _, m, a in PLAN if a == "oracle")
    # one near miss of CHANGED_NEAR_MISS_CAP tasks per app whose near misses changed last and of NEAR_MISS_SAMPLE others
    misses = [k for k, _, a in PLAN if a.startswith("near_miss:")]
    assert len(misses) == len(set(misses))
    changed = changed_in_last_verification(sorted({TASKS[k].app.id for k in runnable}), kind="near_misses")
    having = {k for k in runnable if TASKS[k].task.near_misses}
    for app in {TASKS[k].app.id for k in having}:
        of_app = {k for k in having if TASKS[k].app.id == app}
        assert len({k for k in misses if k in of_app & changed}) == min(CHANGED_NEAR_MISS_CAP, len(of_app & changed)), app
        assert len({k for k in misses if k in of_app - changed}) == min(NEAR_MISS_SAMPLE, len(of_app - changed)), app
    assert {(k, a) for k, _, a in PLAN if a.startswith("alternative:")} == {
        (k, f"alternative:{s.id}") for k in runnable for s in TASKS[k].task.alternatives}
    # a recorded killed mutant of MUTANT_SAMPLE tasks per app that has them
    mutants = [(k, a.partition(":")[2]) for k, _, a in PLAN if a.startswith("mutant:")]
    for k, mid in mutants:
        assert load_records(TASKS[k].app.id).tasks[k].mutation.mutants[mid].outcome == "killed"
    for app in {TASKS[k].app.id for k in runnable}:
        having = {k for k in runnable if TASKS[k].app.id == app and (rec := load_records(app).tasks.get(k))
                  and rec.mutation and any(m.outcome == "killed" for m in rec.mutation.mutants.values())}
        assert len({k for k, _ in mutants if k in having}) == min(MUTANT_SAMPLE, len(having)), app


def test_a_crashed_null_or_near_miss_proves_nothing():
    """A null agent or near miss that failed because the app crashed (or never started) did not show the
    checks reject the work: only a failure on the verdict counts, locally and in containers."""
    assert proves("null", False, "evaluated_failed") and not proves("null", False, "setup_error")
    assert proves("near_miss:x", False, "collateral") and not proves("near_miss:x", False, "app_crash")
    assert not proves("null", True, None) and proves("oracle", True, None) and not proves("oracle", False, None)
    ok, crashed = (TrialProof(passed=False, kscr=0.0, failure=f, seconds=1.0) for f in ("evaluated_failed", "setup_error"))
    oracle = TrialProof(passed=True, kscr=1.0, seconds=1.0)
    record = TaskRecord(hash="h", verified_at="t", docker={"oracle-mcp": oracle, "null-mcp": ok})
    assert record.proven_in_container()
    assert not record.model_copy(update={"docker": {"oracle-mcp": oracle, "null-mcp": crashed}}).proven_in_container()


PARALLEL = int(os.environ.get("MCPWORLD_TEST_PARALLEL", "2"))  # environments side by side (the bench: 1.66x at 2)
# The whole re-proof runs in the first test's set-up, so the suite's per-test limit would cut it short (and
# did: CI lost the trials still running). Its own limit: three times what the plan took when verified.
REPROOF_LIMIT = max(600.0, 3 * plan_seconds(TASKS, PLAN) / PARALLEL)
TRIAL_MARGIN = 300.0  # one trial's bound beyond its task's timeout (start-up, state query, teardown)


@pytest.fixture(scope="module")
def reproofs(tmp_path_factory) -> dict:
    """Every planned trial, PARALLEL at a time: (task, mode, agent) -> (result, first failure) or what the
    trial raised. A GUI oracle that fails, a solution whose step failed, or a trial whose set-up failed gets
    one more attempt (verify.run_job)."""
    out = tmp_path_factory.mktemp("reproof")

    async def one(gate, key, mode, agent):
        rt = TASKS[key]
        async with gate:
            result, retried = await asyncio.wait_for(run_job((rt, mode, agent), out, LOCAL),
                                                     2 * (rt.task.timeout + TRIAL_MARGIN))
        first = RunDir(out).trial(rt.app.id, key, f"{mode}-{agent.replace(':', '-')}", 0) if retried else None
        first = first.load_result() if first else None
        return result, describe(first) if first else None

    async def all_of_them():
        gate = asyncio.Semaphore(PARALLEL)
        # one trial raising must not cancel the others: its own test reports it
        done = await asyncio.gather(*(one(gate, *p) for p in PLAN), return_exceptions=True)
        return {p: (r, None) if isinstance(r, BaseException) else r for p, r in zip(PLAN, done)}

    return asyncio.run(all_of_them())


@pytest.mark.timeout(REPROOF_LIMIT)
@pytest.mark.parametrize("key,mode,agent", PLAN, ids=[f"{k}-{m}-{a}" for k, m, a in PLAN])
def test_reproof(key, mode, agent, reproofs):
    rt = TASKS[key]
    result, first_failure = reproofs[(key, mode, agent)]
    if isinstance(result, BaseException):
        pytest.fail(f"the trial raised {type(result).__name__}: {result!r}")
    if first_failure:
        warnings.warn(f"{key} {mode} {agent}: the first attempt proved nothing, retried once: {first_failure}")
    if agent == "null":
        assert not result.success, "the null agent passed: the task's checks do not depend on the agent's work"
        assert result.failure == "evaluated_failed", describe(result)
        assert result.kscr < 1.0
        return
    if not expected_to_pass(agent):  # a near miss or a recorded mutant: it must fail on its verdict, not on a crash
        kind, _, solution = agent.partition(":")
        why = rt.task.solution(solution).why if kind == "near_miss" else f"mutant {solution}"
        assert not result.success, f"the {kind.replace('_', ' ')} passed: {why}"
        assert result.failure in VERDICT_FAILURES and result.agent_failure is None, describe(result)
        return
    assert result.success, describe(result)
    # the oracle walks every key step; another right solution may skip a progress-only one (its `why` says
    # which: vscode/6 commits with git commit -a and never shows a staged change), so it needs the required ones
    required = [s.id for s in rt.task.key_steps] if rt.task.success.key_steps == "all" else rt.task.success.key_steps
    reached = {s.id for s in result.verdict.key_steps if s.reached}
    assert result.kscr == 1.0 if agent == "oracle" else set(required) <= reached, describe(result)
    assert result.failure is None and result.agent_failure is None, result.failure_detail
    kinds = set(result.tool_calls_by_kind)
    assert kinds <= ({"gui"} if mode == "gui" else {"mcp", "gui"}), kinds
    if agent == "oracle":
        assert result.steps == sum(s.is_action for s in rt.task.oracle_for(mode))
