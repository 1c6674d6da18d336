"""Running a task's mutants (mcpworld.mutants) and keeping their outcome with the task's proof record.

One scout trial (the null agent in the mutants' mode) gives the tools offered and the state the trial
starts from; the mutants are derived from those and the task's MCP oracle, and each runs as a trial of
its own. A mutant is **killed** when its verdict fails it, **survives** when it passes (a hole in the
check, unless the task lists it as equivalent), is **stillborn** when one of its calls was refused (the
app or its server would not do it: it says nothing about the check), and an **error** when its set-up
failed twice. The mutation score is killed / (killed + survived), equivalents left out.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from gateway.modes import Mode
from mcpworld.concurrency import gather_all
from mcpworld.config.load import ResolvedTask
from mcpworld.mutants import Mutant, generate, tool_infos
from mcpworld.rejudge import note_solution
from mcpworld.results import VERDICT_FAILURES, Failure, TrialResult

Outcome = Literal["killed", "survived", "equivalent", "stillborn", "error"]


class MutantProof(BaseModel):
    family: str
    what: str
    steps: list[dict]
    outcome: Outcome
    failure: str | None = None
    reason: str = ""               # the verdict's reason (why it was killed), or the refused call
    seconds: float = 0.0


class MutationRecord(BaseModel):
    mode: str
    killed: int = 0
    survived: int = 0
    equivalent: int = 0
    stillborn: int = 0
    errors: int = 0
    mutants: dict[str, MutantProof] = Field(default_factory=dict)

    @property
    def score(self) -> float | None:
        n = self.killed + self.survived
        return self.killed / n if n else None

    @property
    def complete(self) -> bool:
        """Every mutant killed or a listed equivalent, none lost to errors."""
        return self.survived == 0 and self.errors == 0

    def tally(self) -> None:
        for outcome in ("killed", "survived", "equivalent", "stillborn"):
            setattr(self, outcome, sum(1 for m in self.mutants.values() if m.outcome == outcome))
        self.errors = sum(1 for m in self.mutants.values() if m.outcome == "error")


def mutation_mode(rt: ResolvedTask) -> Mode | None:
    """The mode mutants run in (they are MCP calls), or None: the task has no MCP oracle to mutate."""
    if not rt.task.oracle.mcp:
        return None
    return Mode.MCP if Mode.MCP in rt.task.modes else Mode.HYBRID if Mode.HYBRID in rt.task.modes else None


def start_state(trial_dir: Path) -> dict | None:
    """The state query's answer before the agent (the first query event of a trial)."""
    try:
        for line in (trial_dir / "events.jsonl").read_text().splitlines():
            e = json.loads(line)
            if e.get("source") == "query":
                return e["payload"]
    except (OSError, ValueError):
        pass
    return None


def mutants_from(rt: ResolvedTask, scout_dir: Path) -> list[Mutant]:
    """The task's mutants, derived from its MCP oracle, the tools the scout trial was offered and its start."""
    specs = json.loads((scout_dir / "tools.json").read_text())
    if specs and isinstance(specs[0], str):
        raise ValueError(f"{scout_dir}/tools.json lists names only (a trial of an older mcpworld)")
    state = start_state(scout_dir) or {}
    spec = rt.state_diff
    from evaluator.delta import Shape
    shape = spec.shape if spec is not None else Shape()
    steps = [{"tool": s.tool, "args": s.args} for s in rt.task.oracle.mcp or []]
    return generate(steps, tool_infos(specs), state, shape, dict(rt.task.params), salt=rt.key)


def classify(rt: ResolvedTask, mutant_id: str, result: TrialResult) -> tuple[Outcome, str]:
    equivalent = {e.mutant for e in rt.task.equivalent}
    if result.failure == Failure.SETUP_ERROR or result.failure == Failure.INTERRUPTED:
        return "error", result.failure_detail
    if result.agent_failure is not None:
        return "stillborn", result.failure_detail
    if result.success:
        return ("equivalent" if mutant_id in equivalent else "survived"), ""
    if result.failure in VERDICT_FAILURES:
        return "killed", result.verdict.reason if result.verdict else result.failure_detail
    return "error", f"{result.failure}: {result.failure_detail}"


async def run_mutation(rt: ResolvedTask, out: Path, backend: str, gate: asyncio.Semaphore,
                       scout_dir: Path | None = None,
                       on_trial: Callable[[str], None] | None = None,
                       on_done: Callable[[TrialResult, str, str], None] | None = None,
                       on_mutants: Callable[[int], None] | None = None) -> MutationRecord | None:
    """Scout (unless a trial of the task in an MCP mode is given), derive, run every mutant; None when the task
    has no MCP oracle. `on_trial` is told each trial's label as it starts, `on_done` each result with its
    label and outcome (a mutant's, or "scout")."""
    from mcpworld.agents import make_agent
    from mcpworld.rundir import RunDir
    from mcpworld.trial import TrialOptions, run_trial

    mode = mutation_mode(rt)
    if mode is None:
        return None
    run = RunDir(out)
    opts = TrialOptions(mode=mode, backend=backend)

    async def trial(label: str, agent) -> tuple[TrialResult, Path]:
        async with gate:
            if on_trial:
                on_trial(f"{rt.key} {label}")
            folder = run.trial(rt.app.id, rt.key, f"{mode}-{label.replace('@', '-').replace('=', '-')}", 0).path
            result = await run_trial(rt, agent, opts, folder)
            kind = "scout" if label == "scout" else "mutant"
            note_solution(folder, kind, "" if kind == "scout" else label, getattr(agent, "steps", None) and
                          [{"tool": s.tool, "args": s.args} for s in agent.steps])
            if on_done:
                on_done(result, f"{rt.key} {label}", "scout" if kind == "scout" else classify(rt, label, result)[0])
            return result, folder

    if scout_dir is None:
        scout, scout_dir = await trial("scout", make_agent("null"))
        if scout.failure == Failure.SETUP_ERROR:
            return MutationRecord(mode=str(mode), errors=1)
    mutants = mutants_from(rt, scout_dir)
    if on_mutants:
        on_mutants(len(mutants))

    async def one(m: Mutant) -> tuple[str, MutantProof]:
        result, _ = await trial(m.id, make_agent("oracle", steps=m.steps))
        outcome, reason = classify(rt, m.id, result)
        return m.id, MutantProof(family=m.family, what=m.what, steps=m.steps, outcome=outcome,
                                 failure=result.failure, reason=reason[:300], seconds=round(result.timings.total_s, 2))

    record = MutationRecord(mode=str(mode), mutants=dict(await gather_all(*(one(m) for m in mutants))))
    record.tally()
    return record
