"""Every ready task stays proven: its content has a passing `mcpworld tasks verify` record (every declared
mode's oracle passed, the null agent failed), and CI re-proves part of it on every run with the code as it
is now (mcpworld.verify.ci_plan): one slice of every task's proof trials (each declared mode's oracle, the
null agent, each near miss and alternative, one recorded killed mutant), about ROLLING_BUDGET seconds of
them, the slice chosen by HEAD's commit number so that consecutive commits re-prove all of them in turn;
the proof trials of the tasks whose records are the oldest under an older verdict path (OLDEST_BUDGET);
and the changed GUI oracles and near misses of the newest record change. A task CI cannot run here (its
hooks need the app's source build) is a reported skip.

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
from mcpworld.verify import (CHANGED_CAP, CHANGED_NEAR_MISS_CAP, OLDEST_BUDGET, ROLLING_BUDGET, TaskRecord,
                             TrialProof, by_proof_age, changed_in_last_verification, ci_plan, commit_number, cut,
                             expected_to_pass, lacks_build, load_records, oldest_first, plan_seconds, proof_age,
                             proof_trials, proves, rolling_slices, rotation, run_job, stale, verdict_digest)

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


def test_the_rolling_slices_cover_every_proof_trial_within_the_budget():
    """Consecutive commits re-prove every trial of every runnable task in turn; each run's slice fits the budget."""
    runnable = {k: TASKS[k] for k in READY if not lacks_build(TASKS[k])}
    records = {rt.app.id: load_records(rt.app.id) for rt in runnable.values()}
    trials = proof_trials(runnable, records)
    assert {k for k, _, a in trials if a == "null"} == set(runnable)
    assert {(k, m) for k, m, a in trials if a == "oracle"} == {(k, str(m)) for k, rt in runnable.items() for m in rt.task.modes}
    assert {(k, a.partition(":")[2]) for k, _, a in trials if a.startswith(("near_miss:", "alternative:"))} == {
        (k, s.id) for k, rt in runnable.items() for s in (*rt.task.near_misses, *rt.task.alternatives)}
    for k, _, a in trials:
        if a.startswith("mutant:"):
            assert records[TASKS[k].app.id].tasks[k].mutation.mutants[a.partition(":")[2]].outcome == "killed"
            assert a.partition(":")[2] not in {e.mutant for e in TASKS[k].task.equivalent}
    slices = rolling_slices(TASKS, trials)
    flat = [t for part in slices for t in part]
    assert sorted(flat) == sorted(trials) and len(set(flat)) == len(flat)
    assert all(len(part) == 1 or plan_seconds(TASKS, part) <= ROLLING_BUDGET for part in slices)
    # this run's plan: its commit's slice and what the newest record change re-proved, each trial once
    assert set(slices[commit_number() % len(slices)]) <= set(PLAN) and len(set(PLAN)) == len(PLAN)
    assert set(ci_plan(TASKS, number=commit_number() + 1)) >= set(slices[(commit_number() + 1) % len(slices)])


def test_ci_re_proves_the_oldest_proofs_first():
    """Besides the slice, the proof trials of the tasks proven longest ago under an older verdict path: whole
    tasks, oldest first, within OLDEST_BUDGET by the records' costs; a task proven under the current one never."""
    runnable = {k: TASKS[k] for k in READY if not lacks_build(TASKS[k])}
    records = {rt.app.id: load_records(rt.app.id) for rt in runnable.values()}
    digests = {app: verdict_digest(app) for app in records}
    aged = by_proof_age(runnable)
    current = {k for k, rt in runnable.items() if (r := records[rt.app.id].tasks.get(k)) and r.verdict_digest == digests[rt.app.id]}
    assert set(aged) == set(runnable) - current
    ages = [proof_age(records[runnable[k].app.id].tasks.get(k)) for k in aged]
    assert ages == sorted(ages)
    trials = proof_trials(runnable, records)
    oldest = oldest_first(runnable, trials)
    taken = list(dict.fromkeys(k for k, _, _ in oldest))
    assert taken == aged[:len(taken)] and set(oldest) <= set(PLAN)
    assert set(oldest) == {t for t in trials if t[0] in taken}  # whole tasks
    assert len(taken) <= 1 or plan_seconds(TASKS, oldest) <= OLDEST_BUDGET
    if aged[len(taken):]:  # the next one would not have fitted
        nxt = [t for t in trials if t[0] == aged[len(taken)]]
        assert plan_seconds(TASKS, oldest) + plan_seconds(TASKS, nxt) > OLDEST_BUDGET
    # the order itself: no named commit is older than any, then the commit's date, then when it was made
    named = TaskRecord(hash="h", verified_at="2026-12-01T00:00:00", verdict_commit="abc1234 2026-11-20")
    later = named.model_copy(update={"verdict_commit": "def5678 2026-11-28 +", "verified_at": "2026-11-29T00:00:00"})
    unnamed = named.model_copy(update={"verdict_commit": None, "verified_at": "2026-12-05T00:00:00"})
    assert sorted([later, named, unnamed], key=proof_age) == [unnamed, named, later]
    assert cut(["a", "b", "c"], [5, 4, 1], 9) == [["a", "b"], ["c"]]
    assert cut(["a", "b"], [50, 1], 9) == [["a"], ["b"]]  # one task over the budget still runs


def test_ci_re_proves_what_the_newest_record_change_re_proved():
    """...at most CHANGED_CAP GUI oracles and CHANGED_NEAR_MISS_CAP tasks' near misses per app."""
    runnable = {k for k in READY if not lacks_build(TASKS[k])}
    apps = sorted({TASKS[k].app.id for k in runnable})
    changed_gui, changed_misses = changed_in_last_verification(apps), changed_in_last_verification(apps, kind="near_misses")
    slices = rotation(TASKS)
    tasks = {k: TASKS[k] for k in runnable}
    oldest = oldest_first(tasks, proof_trials(tasks, {a: load_records(a) for a in apps}))
    extra = set(PLAN) - set(slices[commit_number() % len(slices)]) - set(oldest)
    for app in apps:
        gui = {k for k in runnable & changed_gui if TASKS[k].app.id == app and "gui" in TASKS[k].task.modes}
        planned = {k for k, m, a in PLAN if a == "oracle" and m == "gui" and k in gui}
        assert len(planned) >= min(CHANGED_CAP, len(gui)), app
        misses = {k for k in runnable & changed_misses if TASKS[k].app.id == app and TASKS[k].task.near_misses}
        planned = {k for k, _, a in PLAN if a.startswith("near_miss:") and k in misses}
        assert len(planned) >= min(CHANGED_NEAR_MISS_CAP, len(misses)), app
    assert all(k in changed_gui | changed_misses for k, _, _ in extra)


@pytest.mark.parametrize("key", [k for k in READY if lacks_build(TASKS[k])] or ["none"])
def test_a_task_ci_cannot_run_here_is_a_reported_skip(key):
    """A task whose hooks need its app's source build, where none is here: its records prove it, and CI says so."""
    if key == "none":
        return
    pytest.skip(f"{key}: its hooks need the app's source build (`make builds`), which is not here; its records prove it")


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
    trial raised. A trial whose set-up failed (an app that crashed while starting) gets one more attempt
    (verify.run_job), reported as a warning; a GUI oracle that failed is not retried, here as in `tasks verify`."""
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
        # every action, and a second try (`unless`) only when the first did not take
        steps = rt.task.oracle_for(mode)
        first = sum(s.is_action for s in steps if s.unless is None)
        assert first <= result.steps <= first + sum(s.is_action for s in steps if s.unless is not None)


def test_a_records_verdict_digest_follows_the_core_and_the_apps_folders_only(tmp_path, monkeypatch):
    """verify records the digest of the code that decides verdicts (`tasks verify --check` counts the records
    proven under older code): a change to the core or the app's folders changes it, another app's does not;
    and the commit it names (with "+" for uncommitted changes) follows the same files."""
    import subprocess

    from mcpworld import paths
    from mcpworld.verify import CORE_PATHS, verdict_commit, verdict_digest

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    for rel in CORE_PATHS:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x") if rel.endswith(".py") else (tmp_path / rel).mkdir(exist_ok=True)
    for folder in ("apps", "hooks"):
        for app in ("a", "b"):
            (tmp_path / folder / app).mkdir(parents=True)
            (tmp_path / folder / app / "f.txt").write_text("1")
    monkeypatch.setattr(paths, "CODE_ROOT", tmp_path)
    monkeypatch.setattr(paths, "ROOT", tmp_path)
    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "start")
    first, named = verdict_digest("a"), verdict_commit("a")
    assert named and not named.endswith("+")
    (tmp_path / "hooks" / "b" / "f.txt").write_text("2")
    (tmp_path / "apps" / "a" / "NOTES.md").write_text("what the app says of itself")
    assert verdict_digest("a") == first and verdict_commit("a") == named
    git("add", "-A")
    git("commit", "-q", "-m", "notes and another app")
    assert verdict_commit("a") == named
    (tmp_path / "evaluator" / "verdict.py").write_text("changed")
    second = verdict_digest("a")
    assert second != first and verdict_commit("a") == named + " +"
    (tmp_path / "hooks" / "a" / "f.txt").write_text("2")
    assert verdict_digest("a") not in (first, second)
