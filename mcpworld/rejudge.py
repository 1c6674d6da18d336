"""Recorded trials judged again under the tasks as they are now: the events and the two state reads a trial
recorded (events.jsonl) are fed to a fresh evaluator. Checks can be rewritten and tried against every oracle,
null agent, near miss and mutant already run, in seconds, before anything runs again (`mcpworld tasks
rejudge`). It proves nothing on its own: a task whose state query or hooks changed must run again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from evaluator.events import Event, Source
from evaluator.verdict import Matcher, Verdict
from mcpworld.config.load import ResolvedTask
from mcpworld.results import Failure, TrialResult

SOLUTION_FILE = "solution.json"  # what a proof trial ran: {"kind": oracle|null|near_miss|alternative|mutant, "id"}
MUST_PASS = ("oracle", "alternative")


@dataclass
class Judged:
    trial: Path
    task: str
    kind: str          # oracle, null, near_miss, alternative, mutant, scout
    solution: str      # the near miss's, alternative's or mutant's id
    recorded: bool     # the verdict when it ran
    verdict: Verdict   # the verdict now
    equivalent: bool = False  # a mutant the task lists as equivalent: either verdict is right

    @property
    def must_pass(self) -> bool:
        return self.kind in MUST_PASS

    @property
    def wrong(self) -> bool:
        return not self.equivalent and self.verdict.success != self.must_pass


def note_solution(trial_dir: Path, kind: str, solution: str = "", steps: list | None = None) -> None:
    """Written beside a proof trial's records: what it ran, so that it can be judged again."""
    data = {"kind": kind, "id": solution, **({"steps": steps} if steps is not None else {})}
    (trial_dir / SOLUTION_FILE).write_text(json.dumps(data, indent=1))


def solution_of(trial_dir: Path) -> tuple[str, str]:
    """(kind, id) of a proof trial: from its note, else from its folder's name (<mode>-<label>)."""
    note = trial_dir / SOLUTION_FILE
    if note.exists():
        data = json.loads(note.read_text())
        return data["kind"], data.get("id", "")
    # <app>-<task id>__<mode>-<label>__<k> (a label may hold "__": a mutant naming an MCP tool)
    middle = trial_dir.name.split("__", 1)[1].rsplit("__", 1)[0] if trial_dir.name.count("__") >= 2 else ""
    label = middle.split("-", 1)[1] if "-" in middle else ""
    for kind in ("oracle", "null", "scout", "near_miss", "alternative"):
        if label == kind or label.startswith(kind + "-"):
            return kind, label[len(kind) + 1:]
    return "mutant", label


def judge(rt: ResolvedTask, trial_dir: Path, mode: str) -> Verdict | None:
    """The verdict the task as it is now gives the trial's records; None when they hold no start state."""
    events = [Event.model_validate_json(line) for line in (trial_dir / "events.jsonl").read_text().splitlines() if line]
    first = next((i for i, e in enumerate(events) if e.source == Source.QUERY), None)
    if first is None:
        return None
    counted = events[first + 1:]  # the start read is the last thing before the agent acts
    ends = [e.payload for e in counted if e.source == Source.QUERY]
    matcher = Matcher(rt, mode)
    for e in counted:
        matcher.feed(e)
    return matcher.verdict(counted, ends[-1] if ends else None, events[first].payload)


def rejudge(run_dir: Path, tasks: dict[str, ResolvedTask], only: set[str] | None = None) -> list[Judged]:
    """Every trial of a run whose agent ran as written, judged again (trials that failed to set up, or whose
    solution had a call refused, are left out: they prove nothing either way)."""
    out = []
    for result_file in sorted(run_dir.glob("trials/*/result.json")):
        trial = result_file.parent
        result = TrialResult.model_validate_json(result_file.read_text())
        if result.task not in tasks or (only and result.task not in only):
            continue
        if result.failure in (Failure.SETUP_ERROR, Failure.INTERRUPTED) or result.agent_failure is not None:
            continue
        kind, solution = solution_of(trial)
        verdict = judge(tasks[result.task], trial, result.mode)
        if verdict is not None:
            listed = {_folder_label(e.mutant) for e in tasks[result.task].task.equivalent}
            out.append(Judged(trial, result.task, kind, solution, result.success, verdict,
                              kind == "mutant" and _folder_label(solution) in listed))
    return out


def _folder_label(mutant_id: str) -> str:
    """A mutant's id as a trial folder's name spells it (and as an older run's folders are all there is)."""
    return mutant_id.replace("@", "-").replace("=", "-")
