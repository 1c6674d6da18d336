"""The layout of a run directory, owned here and nowhere else.

    <run>/run.json          the resolved configuration and every chosen task (`declared`)
    <run>/results.jsonl     one line per finished trial (a killed run keeps what it finished)
    <run>/summary.json      the report (mcpworld.report.build.Report)
    <run>/view.json         the live view of the trial running now (docker)
    <run>/trials/<app>-<task id>__<mode>__<k>/
        events.jsonl  tool_calls.jsonl  tools.json  shots/  final.png  result.json  logs/

The runner, the trial, the report and the commands that read runs all go through these names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from mcpworld.results import TrialResult


@dataclass(frozen=True)
class TrialDir:
    path: Path

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def events(self) -> Path:
        return self.path / "events.jsonl"

    @property
    def tool_calls(self) -> Path:
        return self.path / "tool_calls.jsonl"

    @property
    def tools(self) -> Path:
        return self.path / "tools.json"

    @property
    def shots(self) -> Path:
        return self.path / "shots"

    @property
    def final_png(self) -> Path:
        return self.path / "final.png"

    @property
    def result(self) -> Path:
        return self.path / "result.json"

    @property
    def logs(self) -> Path:
        return self.path / "logs"

    def load_result(self) -> TrialResult | None:
        return TrialResult.model_validate_json(self.result.read_text()) if self.result.exists() else None


def trial_dirname(app: str, task_key: str, mode: str, k: int) -> str:
    """A trial's folder under trials/: '<app>-<task id>__<mode>__<k>' (task_key is 'app/id')."""
    return f"{app}-{task_key.split('/', 1)[1]}__{mode}__{k}"


@dataclass(frozen=True)
class RunDir:
    path: Path

    @property
    def run_json(self) -> Path:
        return self.path / "run.json"

    @property
    def results_jsonl(self) -> Path:
        return self.path / "results.jsonl"

    @property
    def summary(self) -> Path:
        return self.path / "summary.json"

    @property
    def view(self) -> Path:
        return self.path / "view.json"

    @property
    def trials(self) -> Path:
        return self.path / "trials"

    def is_run(self) -> bool:
        return self.trials.is_dir()

    def trial(self, app: str, task_key: str, mode: str, k: int) -> TrialDir:
        return TrialDir(self.trials / trial_dirname(app, task_key, mode, k))

    def trial_of(self, result: TrialResult) -> TrialDir:
        return self.trial(result.app, result.task, result.mode, result.trial)

    def meta(self) -> dict:
        return json.loads(self.run_json.read_text()) if self.run_json.exists() else {}

    def results(self) -> list[TrialResult]:
        """Every trial result (also of a run that was killed midway)."""
        return [TrialResult.model_validate_json(f.read_text()) for f in sorted(self.trials.glob("*/result.json"))]
