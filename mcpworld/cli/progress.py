"""A live progress bar for many trials: passed and failed so far, how many run now, done of total, elapsed
and left, what runs now; one line per finished trial above it. Fits an 80-column terminal."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from mcpworld.results import failed_on_testbed


class TrialProgress:
    def __init__(self, total: int, console: Console):
        self.total, self.console = total, console
        self.passed = self.failed = self.testbed = 0
        self.running: list[str] = []
        self._progress = Progress(
            TextColumn("[green]{task.fields[passed]} pass[/green] [red]{task.fields[failed]} fail[/red] "
                       "[yellow]{task.fields[testbed]} testbed[/yellow] {task.fields[running]} run"),
            BarColumn(bar_width=20), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
            TextColumn("{task.description}", style="dim"), console=console, transient=False)
        self._bar = None

    def __enter__(self) -> TrialProgress:
        self._progress.__enter__()
        self._bar = self._progress.add_task("", total=self.total, passed=0, failed=0, testbed=0, running=0)
        return self

    def __exit__(self, *exc) -> None:
        self._progress.__exit__(*exc)

    def grow(self, n: int) -> None:
        """More trials than first known (a task's mutants, known once its scout trial ran)."""
        self.total += n
        self._progress.update(self._bar, total=self.total)

    def print(self, text: str) -> None:
        self._progress.console.print(text, highlight=False, soft_wrap=True)

    def started(self, label: str) -> None:
        self.running.append(label)
        self._update()

    def finished(self, result, label: str | None = None, outcome: str | None = None) -> None:
        """`outcome`: a mutant's (killed, survived, stillborn, error), shown instead of pass or fail; a killed
        or stillborn mutant counts as passed (the check did its part), a survivor or an error as failed."""
        label = label or f"{result.task} {result.mode} #{result.trial}"
        if label in self.running:
            self.running.remove(label)
        if outcome is not None:
            good = outcome in ("killed", "stillborn", "equivalent", "scout")
            self.passed += good
            self.failed += not good
            mark = {"killed": "[green]killed[/green]", "survived": "[red]SURVIVED[/red]",
                    "equivalent": "[yellow]survived, equivalent[/yellow]", "scout": "[dim]scout[/dim]",
                    "stillborn": "[dim]stillborn (a call refused)[/dim]"}.get(outcome, f"[red]{outcome}[/red]")
        elif result.success:
            self.passed += 1
            mark = "[green]pass[/green]"
        elif failed_on_testbed(result):  # the testbed's failure, not the agent's: kept out of SR, can be rerun
            self.testbed += 1
            mark = f"[yellow]testbed failure[/yellow] ({result.failure})"
        else:
            self.failed += 1
            mark = f"[red]fail[/red] ({result.failure})"
        self.print(f"{label}: {mark} kscr={result.kscr:.2f} {result.timings.total_s:.1f}s")
        self._progress.advance(self._bar)
        self._update()

    def _update(self) -> None:
        now = ", ".join(self.running[:2]) + (f" +{len(self.running) - 2}" if len(self.running) > 2 else "")
        self._progress.update(self._bar, description=now, passed=self.passed, failed=self.failed, testbed=self.testbed,
                              running=len(self.running))
