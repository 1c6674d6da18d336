"""`mcpworld report` and `mcpworld compare`: reading runs."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from mcpworld.cli.common import console, err, fail
from mcpworld.rundir import RunDir


def _require_run_dirs(run_dirs: list[Path]) -> None:
    for d in run_dirs:
        if not RunDir(d).is_run():
            fail(f"{d} is not a run directory (no trials/)")


def report(
    run_dirs: list[Path] = typer.Argument(..., help="one or more run directories (also of runs killed midway)"),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON (what summary.json holds)"),
    csv_file: Optional[Path] = typer.Option(None, "--csv", help="write one row per trial to this CSV file"),
    html_file: Optional[Path] = typer.Option(None, "--html", help="write a self-contained HTML report with plots and timelines"),
    step_cap: Optional[int] = typer.Option(None, min=1, help="WES step cap S (default: the trials' own cap)"),
    prices: Optional[Path] = typer.Option(None, help="JSON price table {model: {input, output, cache_write, cache_read}} "
                                                     "in $ per million tokens, over the built-in one"),
    tasks_table: bool = typer.Option(True, "--tasks/--no-tasks", help="show the per-task table"),
):
    """SR, KSCR, WES, IMPLEMENTED/STRICT, pass@k, cost and failures of one or more runs."""
    from mcpworld.report.build import build, load_runs
    from mcpworld.report.prices import load_prices
    from mcpworld.report.text import print_report, trials_csv

    _require_run_dirs(run_dirs)
    try:
        table = load_prices(prices)
    except ValueError as e:
        fail(f"--prices {e}")
    rep = build(*load_runs(run_dirs), step_cap=step_cap, prices=table)
    if csv_file:
        csv_file.write_text(trials_csv(rep.trial_rows))
        err.print(f"trials: {csv_file}")
    if html_file:
        from mcpworld.report.html import render

        html_file.write_text(render(rep))
        err.print(f"report: {html_file}")
    if as_json:
        print(rep.model_dump_json(indent=2))
    else:
        print_report(rep, console, per_task=tasks_table)


def compare(
    run_a: Path, run_b: Path,
    mode_a: Optional[str] = typer.Option(None, help="the mode to take from RUN_A (needed when the runs' modes differ)"),
    mode_b: Optional[str] = typer.Option(None, help="the mode to take from RUN_B"),
    as_json: bool = typer.Option(False, "--json"),
):
    """Paired comparison of two runs (or two modes of one run) per difficulty, as in the paper's Table 9."""
    from mcpworld.report.compare import compare as paired

    _require_run_dirs([run_a, run_b])
    try:
        cmp = paired(RunDir(run_a).results(), RunDir(run_b).results(), str(run_a), str(run_b), mode_a, mode_b)
    except ValueError as e:
        fail(str(e))
    if as_json:
        print(cmp.model_dump_json(indent=2))
        return
    console.print(f"A = {run_a}{' (' + mode_a + ')' if mode_a else ''}\nB = {run_b}{' (' + mode_b + ')' if mode_b else ''}\n"
                  f"paired on {cmp.paired_on}; 95% CI of A - B: Agresti-Min", highlight=False)
    table = Table()
    for col in ("difficulty", "mode", "pairs", "SR A", "SR B", "A - B", "95% CI", "A/B only"):
        table.add_column(col, justify="left" if col in ("difficulty", "mode") else "right")
    last = None
    for r in cmp.rows:
        if last is not None and r.difficulty != last:
            table.add_section()
        table.add_row(r.difficulty if r.difficulty != last else "", r.mode, str(r.pairs), f"{r.sr_a:.0%}", f"{r.sr_b:.0%}",
                      f"{r.difference:+.0%}", f"[{r.low:+.0%}, {r.high:+.0%}]", f"{r.only_a}/{r.only_b}")
        last = r.difficulty
    console.print(table)
    if cmp.unpaired_a or cmp.unpaired_b:
        console.print(f"left out (no partner): {cmp.unpaired_a} trial(s) of A, {cmp.unpaired_b} of B")


def register(app: typer.Typer) -> None:
    app.command()(report)
    app.command()(compare)
