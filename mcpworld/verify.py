"""Proofs of tasks: `mcpworld tasks verify` runs every declared mode's oracle (it must pass) and the null
agent (it must fail) and records the result against a hash of the task's content, in
tasks/<app>/verified.json (written by the tool, never by hand).

The content hash covers what decides whether the proof still holds: the task's folder, the snapshots
it restores, the app's folders (apps/, hooks/, mcp_servers/ of that app) and the installed app's
version. It does not cover mcpworld's core or the probe runtime: CI re-proves a rolling slice of every
proof trial with the code as it is (see `ci_plan`), so a core change cannot hide behind old records for
longer than one rotation.
"""

from __future__ import annotations

import hashlib
import subprocess
import time
from pathlib import Path

from pydantic import BaseModel, Field

from gateway.modes import Mode
from mcpworld import paths
from mcpworld.config.load import ResolvedTask
from mcpworld.envs import LOCAL
from mcpworld.mutation import MutationRecord
from mcpworld.results import VERDICT_FAILURES, Failure, TrialResult

RECORD_FILE = "verified.json"
RECORD_VERSION = 1
# CI re-proves, on every run, one slice of every task's proof trials of at most this many seconds one at a time by
# the records' costs (consecutive commits take consecutive slices), and what the newest record change re-proved:
ROLLING_BUDGET = 8 * 60.0   # the rotation's slice per CI run
OLDEST_BUDGET = 4 * 60.0    # besides it, the trials of the records proven longest ago under an older verdict path
CHANGED_CAP = 2           # changed GUI oracles CI re-proves per app besides the slice
CHANGED_NEAR_MISS_CAP = 2  # changed tasks per app one of whose near misses CI re-proves besides the slice
SAMPLE_SEED = "mcpworld-ci-1"


class TrialProof(BaseModel):
    passed: bool
    kscr: float
    failure: str | None = None
    seconds: float                     # the whole trial
    phases: dict[str, float] = {}      # open, reset, app ready, gateway, agent, query, teardown
    retried: bool = False              # the first attempt's set-up failed (an app that crashed while starting)


class TaskRecord(BaseModel):
    hash: str
    app_version: str | None = None
    verified_at: str
    oracle: dict[str, TrialProof] = Field(default_factory=dict)   # mode -> proof
    null: TrialProof | None = None
    null_mode: str | None = None
    docker: dict[str, TrialProof] = Field(default_factory=dict)   # "oracle-<mode>", "null-<mode>" -> proof
    near_misses: dict[str, TrialProof] = Field(default_factory=dict)   # id -> proof (must have failed)
    alternatives: dict[str, TrialProof] = Field(default_factory=dict)  # id -> proof (must have passed)
    mutation: MutationRecord | None = None  # the MCP oracle's mutants (mcpworld tasks mutate)
    # the code that decides its verdicts besides its content (verdict_paths) when it was proven locally: a
    # digest of it, and the newest commit that changed it ("+" when uncommitted changes were in the tree)
    verdict_digest: str | None = None
    verdict_commit: str | None = None

    def proven_in_container(self) -> bool:
        oracles = [p for k, p in self.docker.items() if k.startswith("oracle-")]
        nulls = [p for k, p in self.docker.items() if k.startswith("null-")]
        return (bool(oracles and nulls) and all(p.passed for p in oracles)
                and all(not p.passed and p.failure == Failure.EVALUATED_FAILED for p in nulls))

    def proven(self, modes: list[str], near_misses: list[str] = (), alternatives: list[str] = ()) -> bool:
        """Every declared mode's oracle passed, the null agent failed (on its verdict, not a crash), every near
        miss failed on its verdict and every alternative passed."""
        return (all(m in self.oracle and self.oracle[m].passed for m in modes) and self.null is not None
                and not self.null.passed and self.null.failure == Failure.EVALUATED_FAILED
                and all(n in self.near_misses and not self.near_misses[n].passed
                        and self.near_misses[n].failure in VERDICT_FAILURES for n in near_misses)
                and all(a in self.alternatives and self.alternatives[a].passed for a in alternatives))


class AppRecords(BaseModel):
    v: int = RECORD_VERSION
    note: str = "written by `mcpworld tasks verify`; do not edit by hand"
    tasks: dict[str, TaskRecord] = Field(default_factory=dict)


# -- content hashes --------------------------------------------------------------------------
DOCS = {"NOTES.md", "measured.json", "typing.json"}  # what an app or task folder says about itself (its notes, its
# measured memory peak, the field the typing bench types into): no proof depends on it


def _hash_tree(h, root: Path, label: str) -> None:
    if root.is_file():
        h.update(f"{label}\0".encode())
        h.update(root.read_bytes())
        return
    for f in sorted(p for p in root.rglob("*")
                    if p.is_file() and "__pycache__" not in p.parts and p.name not in DOCS):
        h.update(f"{label}/{f.relative_to(root)}\0".encode())
        h.update(f.read_bytes())


def content_hash(rt: ResolvedTask, app_version: str | None) -> str:
    """What the task's proof depends on: its folder, its snapshots, its app's folders, the app's version."""
    h = hashlib.sha256()
    _hash_tree(h, rt.folder, "task")
    for cd in rt.task.context_data:
        _hash_tree(h, paths.SNAPSHOTS_DIR / cd.from_, f"snapshot:{cd.from_}")
    for folder in ("apps", "hooks", "mcp_servers"):
        d = paths.ROOT / folder / rt.app.id
        if d.exists():
            _hash_tree(h, d, folder)
    h.update(f"version\0{app_version}".encode())
    return h.hexdigest()[:32]


# the core's part of every verdict: what runs a trial, carries the tools and events, and decides
CORE_PATHS = ("mcpworld", "gateway", "evaluator", "probe_runtime", "mcp_servers/bridge.py", "mcp_servers/hints.py")


def verdict_paths(app_id: str) -> list[str]:
    """What decides an app's verdicts besides a task's content: the core (under CODE_ROOT), and the app's
    folders (under ROOT)."""
    return [*CORE_PATHS, f"apps/{app_id}", f"hooks/{app_id}", f"mcp_servers/{app_id}"]


def verdict_digest(app_id: str) -> str:
    h = hashlib.sha256()
    for rel in verdict_paths(app_id):
        root = (paths.CODE_ROOT if rel in CORE_PATHS else paths.ROOT) / rel
        if root.exists():
            _hash_tree(h, root, rel)
    return h.hexdigest()[:32]


def proof_marks(rt: ResolvedTask, app_version: str | None) -> tuple[str, str]:
    """What a record names: the task's content hash and the digest of its verdict path."""
    return content_hash(rt, app_version), verdict_digest(rt.app.id)


def verdict_commit(app_id: str) -> str | None:
    """The newest commit that changed the app's verdict path, with "+" when the tree changes it still; None
    without git."""
    # the same files as verdict_digest: an edit of an app's NOTES.md is no change of its verdict path
    rels = [*verdict_paths(app_id), *(f":(exclude,glob)**/{d}" for d in sorted(DOCS))]
    try:
        log = subprocess.run(["git", "log", "-1", "--format=%h %cs", "--", *rels], cwd=paths.ROOT,
                             capture_output=True, text=True, timeout=30)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", *rels], cwd=paths.ROOT,
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if log.returncode != 0 or not log.stdout.strip():
        return None
    return log.stdout.strip() + (" +" if dirty.stdout.strip() else "")


# -- records ----------------------------------------------------------------------------------
def record_path(app_id: str) -> Path:
    return paths.TASKS_DIR / app_id / RECORD_FILE


def load_records(app_id: str) -> AppRecords:
    p = record_path(app_id)
    return AppRecords.model_validate_json(p.read_text()) if p.exists() else AppRecords()


def save_record(app_id: str, key: str, record: TaskRecord | None) -> None:
    """Store (or, with None, drop) one task's record; the file stays sorted so diffs stay small."""
    records = load_records(app_id)
    if record is None:
        records.tasks.pop(key, None)
    else:
        records.tasks[key] = record
    records.tasks = dict(sorted(records.tasks.items(), key=lambda kv: _task_order(kv[0])))
    record_path(app_id).write_text(records.model_dump_json(indent=1, exclude_none=True) + "\n")


def _task_order(key: str) -> tuple[int, str]:
    tid = key.split("/", 1)[1]
    return (int(tid), "") if tid.isdigit() else (1 << 30, tid)


def proof(result: TrialResult, retried: bool = False) -> TrialProof:
    t = result.timings
    phases = {"open": t.open_s, "reset": t.reset_s, "ready": t.app_ready_s, "gateway": t.gateway_s,
              "agent": t.agent_s, "query": t.query_s, "teardown": t.teardown_s}
    # an oracle whose own calls failed has not proven anything, even if the app ended in the right state
    passed = result.success and not (result.agent == "oracle" and result.agent_failure)
    failure = result.failure or result.agent_failure
    return TrialProof(passed=passed, kscr=result.kscr, failure=failure,
                      seconds=round(t.total_s, 2),
                      phases={k: round(v, 3) for k, v in phases.items()}, retried=retried)


def stale(rt: ResolvedTask, records: AppRecords, app_version: str | None, in_container: bool = False) -> str | None:
    """Why the task's current content lacks a passing record (with in_container, also one from a container),
    or None when it has one."""
    rec = records.tasks.get(rt.key)
    if rec is None:
        return "never verified"
    if rec.hash != content_hash(rt, app_version):
        return "its content changed since it was verified"
    if not rec.proven(*proof_terms(rt)):
        return "its last verification did not pass"
    if needs_mutants(rt) and not (rec.mutation and rec.mutation.complete):
        return ("a mutant of its MCP oracle passed (or could not run): fix the check or list it as equivalent, "
                "then `mcpworld tasks verify` it" if rec.mutation else "its mutants never ran (`mcpworld tasks verify`)")
    if in_container and not rec.proven_in_container():
        return "not verified in a container (mcpworld tasks verify --backend docker)"
    return None


def needs_mutants(rt: ResolvedTask) -> bool:
    """A task with an MCP oracle must show its mutants killed (or listed as equivalent)."""
    from mcpworld.mutation import mutation_mode

    return mutation_mode(rt) is not None


def proof_terms(rt: ResolvedTask) -> tuple[list[str], list[str], list[str]]:
    """What a record must show for the task: its declared modes, its near misses, its alternatives."""
    return ([str(m) for m in rt.task.modes], [s.id for s in rt.task.near_misses], [s.id for s in rt.task.alternatives])


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# -- what CI re-proves -------------------------------------------------------------------------
def _proof_of(kind: str):
    """What a record says of one kind of trial: the GUI oracle's proof, or the near misses' proofs."""
    if kind == "gui":
        return lambda rec: rec.oracle.get("gui")
    return lambda rec: rec.near_misses


def changed_in_last_verification(app_ids: list[str], lookback: int = 20, kind: str = "gui") -> set[str]:
    """Tasks whose proofs of `kind` ("gui": the GUI oracle, "near_misses") changed in the newest commit (of
    the last `lookback` touching an app's record file) that changed any (git; empty without history). A
    commit that only rehashed records or added container proofs changes neither and is looked past."""
    of = _proof_of(kind)
    changed: set[str] = set()
    for app_id in app_ids:
        rel = str(record_path(app_id).relative_to(paths.ROOT))

        def version(rev: str) -> dict | None:
            out = subprocess.run(["git", "show", f"{rev}:{rel}"], cwd=paths.ROOT, capture_output=True, text=True,
                                 timeout=30)
            return AppRecords.model_validate_json(out.stdout).tasks if out.returncode == 0 else None

        try:
            commits = subprocess.run(["git", "log", f"-{lookback}", "--format=%H", "--", rel], cwd=paths.ROOT,
                                     capture_output=True, text=True, timeout=30).stdout.split()
            for commit in commits:
                new, old = version(commit) or {}, version(f"{commit}^") or {}
                these = {k for k, rec in new.items() if k not in old or of(old[k]) != of(rec)}
                if these:
                    changed |= these
                    break
        except (OSError, subprocess.TimeoutExpired):
            continue
    return changed


def _seeded(keys, salt: str = "") -> list[str]:
    return sorted(keys, key=lambda k: hashlib.sha256(f"{SAMPLE_SEED}:{k}{salt}".encode()).hexdigest())


def lacks_build(rt: ResolvedTask) -> bool:
    """The task hooks internal functions, and no source build of its app is here to run it on."""
    from mcpworld import build

    return rt.task.app_build == "source" and (rt.app.build is None or build.newest(rt.app.build.source) is None)


def runnable(tasks: dict[str, ResolvedTask]) -> dict[str, ResolvedTask]:
    """The ready tasks that can run here (a source-build task only where its build is)."""
    return {k: rt for k, rt in tasks.items() if rt.task.status == "ready" and not lacks_build(rt)}


def rotation(tasks: dict[str, ResolvedTask], budget: float = ROLLING_BUDGET) -> list[list[tuple[str, str, str]]]:
    """Every proof trial of the runnable tasks, in the slices consecutive CI runs re-prove in turn."""
    ready = runnable(tasks)
    return rolling_slices(tasks, proof_trials(ready, {a: load_records(a) for a in {rt.app.id for rt in ready.values()}}),
                          budget)


def proof_trials(ready: dict[str, ResolvedTask], records: dict[str, AppRecords]) -> list[tuple[str, str, str]]:
    """Every trial the tasks' proofs are made of, for CI's rolling re-proof: each declared mode's oracle, the
    null agent (in the mode its record used), each near miss and alternative, and one recorded killed mutant
    (by the seed, not one the task lists as equivalent) of each task that has them."""
    trials: list[tuple[str, str, str]] = []
    for key, rt in ready.items():
        record = records[rt.app.id].tasks.get(key)
        trials += [(key, str(m), "oracle") for m in rt.task.modes]
        trials.append((key, record.null_mode if record and record.null_mode else str(rt.task.modes[-1]), "null"))
        trials += [(key, m, a) for _, m, a in solution_jobs(rt)]
        # a listed equivalent may fail (a wait that ran out on a loaded machine) but never has to
        equivalent = {e.mutant for e in rt.task.equivalent}
        killed = [mid for mid, m in record.mutation.mutants.items() if m.outcome == "killed" and mid not in equivalent] \
            if record and record.mutation else []
        if killed:
            trials.append((key, record.mutation.mode, f"{MUTANT}:{_seeded(killed, f':{key}')[0]}"))
    return trials


def rolling_slices(tasks: dict[str, ResolvedTask], trials: list[tuple[str, str, str]],
                   budget: float = ROLLING_BUDGET) -> list[list[tuple[str, str, str]]]:
    """The trials in a fixed-seed order (apps and kinds mixed), cut into consecutive slices of at most
    `budget` seconds by the records' costs (one trial over it is a slice of its own)."""
    order = sorted(trials, key=lambda t: hashlib.sha256(f"{SAMPLE_SEED}:{'|'.join(t)}".encode()).hexdigest())
    return cut(order, trial_seconds(tasks, order), budget)


def cut(items: list, costs: list[float], budget: float) -> list[list]:
    """`items` in their order, cut into consecutive parts of at most `budget` by their `costs` (an item over
    it is a part of its own)."""
    parts: list[list] = [[]]
    used = 0.0
    for item, cost in zip(items, costs):
        if parts[-1] and used + cost > budget:
            parts.append([])
            used = 0.0
        parts[-1].append(item)
        used += cost
    return parts


def proof_age(record: TaskRecord | None) -> tuple[str, str]:
    """How old a record's proof is, oldest first when sorted: the date of the verdict-path commit it was
    proven under (a record made before records named it is older than any), then when it was made."""
    if record is None:
        return ("", "")
    commit = (record.verdict_commit or "").split()
    return (commit[1] if len(commit) > 1 else "", record.verified_at)


def by_proof_age(ready: dict[str, ResolvedTask]) -> list[str]:
    """The tasks whose record was proven under another verdict path than the current one (or that have none),
    the oldest proof first (`proof_age`; the seed orders equals)."""
    apps = {rt.app.id for rt in ready.values()}
    records, digests = {a: load_records(a) for a in apps}, {a: verdict_digest(a) for a in apps}
    older = [k for k, rt in ready.items() if (r := records[rt.app.id].tasks.get(k)) is None
             or r.verdict_digest != digests[rt.app.id]]
    return sorted(older, key=lambda k: (proof_age(records[ready[k].app.id].tasks.get(k)), _seeded([k])[0]))


def oldest_first(ready: dict[str, ResolvedTask], trials: list[tuple[str, str, str]],
                 budget: float = OLDEST_BUDGET) -> list[tuple[str, str, str]]:
    """The proof trials (of `trials`) of the tasks proven longest ago under an older verdict path, as many
    whole tasks as fit `budget` by the records' costs. What a local re-proof (`tasks verify --oldest`)
    renews, the next run no longer takes."""
    by_task: dict[str, list[tuple[str, str, str]]] = {}
    for t in trials:
        by_task.setdefault(t[0], []).append(t)
    keys = [k for k in by_proof_age(ready) if k in by_task]
    seconds = dict(zip(trials, trial_seconds(ready, trials)))  # the records read once
    first = cut(keys, [sum(seconds[t] for t in by_task[k]) for k in keys], budget)[0]
    return [t for k in first for t in by_task[k]]


def record_seconds(record: TaskRecord | None, unrecorded: float = 300.0) -> float:
    """What a task's whole proof took when it was last made, one trial after another (mutants included; a
    mutant recorded before mutants had their time counts as the record's average trial)."""
    if record is None:
        return unrecorded
    proofs = [*record.oracle.values(), *([record.null] if record.null else []), *record.near_misses.values(),
              *record.alternatives.values(), *(record.mutation.mutants.values() if record.mutation else [])]
    timed = [p.seconds for p in proofs if p.seconds]
    average = sum(timed) / len(timed) if timed else unrecorded
    return sum(p.seconds or average for p in proofs)


def commit_number() -> int:
    """How many commits HEAD has (0 without git history): which rolling slice this CI run re-proves."""
    try:
        out = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=paths.ROOT, capture_output=True,
                             text=True, timeout=30)
        return int(out.stdout.strip()) if out.returncode == 0 else 0
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 0


def in_turn(names: list[str], per_run: int) -> list[str]:
    """`per_run` of `names`, the next ones at each commit (HEAD's commit number), so a few commits run all: what a
    CI run tests of a set too slow to test whole each time."""
    n = commit_number()
    return sorted({names[(n * per_run + i) % len(names)] for i in range(per_run)})


def ci_plan(tasks: dict[str, ResolvedTask], number: int | None = None,
            budget: float = ROLLING_BUDGET) -> list[tuple[str, str, str]]:
    """(task, mode, agent) triples one CI run re-proves with the code as it is: slice `number` modulo their
    count (by default HEAD's commit number) of every proof trial of every ready task (`rolling_slices`), so
    that consecutive commits re-prove all of them in turn; the proof trials of the tasks whose records are
    oldest under an older verdict path (`oldest_first`); and the GUI oracles and one near miss of the
    tasks whose GUI or near-miss proofs changed in the app's newest such record change (at most
    CHANGED_CAP and CHANGED_NEAR_MISS_CAP per app, chosen with a fixed seed): what the landing re-proved is
    re-proven on a fresh machine. Deterministic for a given set of records and commit.
    A task whose hooks need the app's source build is left to its records where no such build is here
    (CI cannot afford one: the build itself is proven on a small package, tests/mcpworld/test_build.py)."""
    ready = runnable(tasks)
    records = {app: load_records(app) for app in {rt.app.id for rt in ready.values()}}
    slices = rotation(tasks, budget)
    plan = list(slices[(commit_number() if number is None else number) % len(slices)])
    plan += oldest_first(ready, proof_trials(ready, records))
    changed, taken = changed_in_last_verification(sorted(records)), {}
    for key in _seeded(k for k, rt in ready.items() if Mode.GUI in rt.task.modes and k in changed):
        app = ready[key].app.id
        if taken.get(app, 0) < CHANGED_CAP:
            taken[app] = taken.get(app, 0) + 1
            plan.append((key, str(Mode.GUI), "oracle"))
    plan += near_miss_plan(ready, changed_in_last_verification(sorted(records), kind="near_misses"))
    return list(dict.fromkeys(plan))  # a trial in both parts runs once


def near_miss_plan(ready: dict[str, ResolvedTask], changed: set[str]) -> list[tuple[str, str, str]]:
    """One near miss (by the seed) of CHANGED_NEAR_MISS_CAP tasks per app in `changed`."""
    with_misses = [k for k, rt in ready.items() if rt.task.near_misses and k in changed]
    plan = []
    for app in sorted({ready[k].app.id for k in with_misses}):
        for key in _seeded(k for k in with_misses if ready[k].app.id == app)[:CHANGED_NEAR_MISS_CAP]:
            misses = {a: m for _, m, a in solution_jobs(ready[key]) if a.startswith(NEAR_MISS)}
            first = _seeded(misses, f":{key}")[0]
            plan.append((key, misses[first], first))
    return plan


def trial_seconds(tasks: dict[str, ResolvedTask], plan: list[tuple[str, str, str]],
                  unrecorded: float = 30.0) -> list[float]:
    """What each planned trial took when it was last verified (`unrecorded` for a trial without a record)."""
    records = {app: load_records(app) for app in {tasks[k].app.id for k, _, _ in plan}}
    out = []
    for key, mode, agent in plan:
        record = records[tasks[key].app.id].tasks.get(key)
        kind, _, solution = agent.partition(":")
        proof_ = None if record is None else (
            record.oracle.get(mode) if agent == "oracle" else record.null if kind == "null"
            else record.near_misses.get(solution) if kind == NEAR_MISS
            else (record.mutation.mutants.get(solution) if record.mutation else None) if kind == MUTANT
            else record.alternatives.get(solution))
        out.append(proof_.seconds if proof_ else unrecorded)
    return out


def plan_seconds(tasks: dict[str, ResolvedTask], plan: list[tuple[str, str, str]], unrecorded: float = 30.0) -> float:
    """What the planned trials took when they were last verified, one after another: the budget CI's re-proof
    is held to."""
    return sum(trial_seconds(tasks, plan, unrecorded))


def costs(tasks: dict[str, ResolvedTask]) -> dict[str, dict[str, float]]:
    """Median seconds per phase of the recorded trials, per mode and for the null agent: the per-trial
    cost table behind CI's time at more tasks."""
    import statistics

    rows: dict[str, list[TrialProof]] = {}
    for app in {rt.app.id for rt in tasks.values()}:
        for rec in load_records(app).tasks.values():
            for mode, p in rec.oracle.items():
                rows.setdefault(f"oracle {mode}", []).append(p)
            if rec.null:
                rows.setdefault("null", []).append(rec.null)
    out = {}
    for name, proofs in sorted(rows.items()):
        phases = {ph: statistics.median(p.phases.get(ph, 0.0) for p in proofs) for ph in proofs[0].phases}
        out[name] = {"trials": len(proofs), "total": statistics.median(p.seconds for p in proofs), **phases}
    return out


# -- running the proofs --------------------------------------------------------------------------
Job = tuple[ResolvedTask, str, str]  # task, mode, agent: oracle, null, near_miss:<id> or alternative:<id>
NEAR_MISS, ALTERNATIVE, MUTANT = "near_miss", "alternative", "mutant"


def solution_jobs(rt: ResolvedTask) -> list[Job]:
    return [*((rt, str(s.mode), f"{NEAR_MISS}:{s.id}") for s in rt.task.near_misses),
            *((rt, str(s.mode), f"{ALTERNATIVE}:{s.id}") for s in rt.task.alternatives)]


def make_job_agent(agent: str, rt: ResolvedTask | None = None):
    """The agent of a proof trial: the oracle, the null agent, a near miss or alternative, or a recorded mutant
    (`mutant:<id>`, replayed from the task's record)."""
    from mcpworld.agents import make_agent

    kind, _, solution = agent.partition(":")
    if kind == MUTANT:
        record = load_records(rt.app.id).tasks.get(rt.key) if rt is not None else None
        mutant = record.mutation.mutants.get(solution) if record and record.mutation else None
        if mutant is None:
            raise KeyError(f"{rt.key if rt else '?'} has no recorded mutant '{solution}'")
        return make_agent("oracle", steps=mutant.steps)
    return make_agent("oracle", solution=solution) if solution else make_agent(kind)


def expected_to_pass(agent: str) -> bool:
    return agent == "oracle" or agent.startswith(ALTERNATIVE)


def proves(agent: str, success: bool, failure: str | None) -> bool:
    """Whether a trial did its part of a proof: an oracle or alternative passed; the null agent failed on
    its verdict; a near miss failed on its verdict. A trial that crashed or never started proves nothing."""
    if expected_to_pass(agent):
        return success
    return not success and failure in ((Failure.EVALUATED_FAILED,) if agent == "null" else VERDICT_FAILURES)


def jobs_for(rt: ResolvedTask, backend: str) -> list[Job]:
    """Locally every declared mode's oracle, the null agent (in the last declared mode) and every near miss
    and alternative; in containers one API mode (MCP where declared), oracle and null."""
    modes = [str(m) for m in rt.task.modes]
    if backend != LOCAL:
        api = str(Mode.MCP) if Mode.MCP in modes else str(Mode.HYBRID) if Mode.HYBRID in modes else modes[0]
        return [(rt, api, "oracle"), (rt, api, "null")]
    return [*((rt, m, "oracle") for m in modes), (rt, modes[-1], "null"), *solution_jobs(rt)]


async def run_job(job: Job, run_dir: Path, backend: str) -> tuple[TrialResult, bool]:
    """One proof trial, and one more attempt, which the record notes, only when its set-up failed (an app
    that crashed while starting: no agent acted). A GUI oracle that fails, or a scripted solution whose step
    failed, is a defect to fix, never retried (here nor in CI's re-proof): input the gateway sends arrives
    whole, and each GUI oracle step waits for what it needs (`draws`, `shows`, `window`)."""
    from mcpworld.rundir import RunDir
    from mcpworld.trial import TrialOptions, run_trial

    rt, mode, agent = job
    run = RunDir(run_dir)
    opts = TrialOptions(mode=mode, backend=backend)
    folder = run.trial(rt.app.id, rt.key, f"{mode}-{agent.replace(':', '-')}", 0).path
    result = await run_trial(rt, make_job_agent(agent, rt), opts, folder)
    _note(folder, agent)
    if result.failure == Failure.SETUP_ERROR:
        result = await run_trial(rt, make_job_agent(agent, rt), opts, folder.with_name(folder.name + "-retry"))
        _note(folder.with_name(folder.name + "-retry"), agent)
        return result, True
    return result, False


def _note(folder: Path, agent: str) -> None:
    from mcpworld.rejudge import note_solution

    kind, _, solution = agent.partition(":")
    if folder.is_dir():
        note_solution(folder, kind, solution)


def record_of(rt: ResolvedTask, outcomes: list[tuple[Job, TrialResult, bool]], app_version: str | None,
              backend: str, previous: TaskRecord | None) -> TaskRecord:
    if backend != LOCAL:
        if previous is None:
            raise ValueError(f"{rt.key}: verify it on the local backend before in containers")
        record = previous.model_copy(deep=True)
        record.docker = {f"{agent}-{mode}": proof(r, retried) for (_, mode, agent), r, retried in outcomes}
        return record
    record = TaskRecord(hash=content_hash(rt, app_version), app_version=app_version, verified_at=now(),
                        verdict_digest=verdict_digest(rt.app.id), verdict_commit=verdict_commit(rt.app.id))
    if previous is not None and previous.hash == record.hash:
        record.docker = previous.docker  # the container proof still holds for the same content
        record.mutation = previous.mutation  # and so do the mutants' outcomes (re-run with --mutants)
    for (_, mode, agent), result, retried in outcomes:
        kind, _, solution = agent.partition(":")
        if agent == "oracle":
            record.oracle[mode] = proof(result, retried)
        elif kind == NEAR_MISS:
            record.near_misses[solution] = proof(result, retried)
        elif kind == ALTERNATIVE:
            record.alternatives[solution] = proof(result, retried)
        else:
            record.null, record.null_mode = proof(result, retried), mode
    return record
