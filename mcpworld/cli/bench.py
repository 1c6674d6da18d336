"""`mcpworld bench ...`: figures next to a baseline measured in the same run."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from mcpworld.cli.common import check_available, console, err, fail, load
from mcpworld.heap import keep_heap

app = typer.Typer(no_args_is_help=True, help="Benchmarks: figures next to a baseline measured in the same run.")


@app.command("run")
def bench_run(part: list[str] = typer.Option([], "--part", help="reset, latency, screenshot, gateway, parallel, "
                                                                 "memory (repeatable; default: all but memory, "
                                                                 "which writes apps/<app>/measured.json)"),
              size: str = typer.Option("full", help="full (>= 1,000 events per source, 1-6 environments), quick "
                                                     "(a few minutes) or smoke (every figure once, for tests)"),
              out: Path = typer.Option(Path("bench.json"), help="where the figures go (JSON)"),
              apps: list[str] = typer.Option([], "--app", help="only this app's figures (repeatable; default: "
                                                               "every installed app with a bench table)"),
              ray_address: Optional[str] = typer.Option(None, "--ray-address", help="parallel: the same widths "
                                                        "also as Ray tasks on this cluster, and Ray's overhead")):
    """Reset, milestone latency, screenshots, gateway overhead and parallel environments, each figure
    (min/median/p95/p99) next to a baseline measured in the same run. What is timed for each app comes
    from the bench table of its app.toml."""
    from mcpworld.bench.run import DEFAULT_PARTS, PARTS, SIZES, run_sync
    from mcpworld.bench.show import print_result

    if size not in SIZES:
        fail(f"--size {size}: one of {', '.join(SIZES)}")
    parts = part or list(DEFAULT_PARTS)
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        fail(f"unknown part(s) {', '.join(unknown)} (known: {', '.join(PARTS)})")
    try:
        keep_heap()
        result = run_sync(parts, size, log=lambda m: err.print(m, highlight=False), apps=apps, ray_address=ray_address)
    except ValueError as e:
        fail(str(e))
    out.write_text(result.model_dump_json(indent=2))
    print_result(result, console)
    for p, e in result.errors.items():
        err.print(f"[red]{p} failed[/red] {e}", highlight=False)
    console.print(f"figures: {out} ({result.seconds:.0f}s)")
    if result.errors:
        raise typer.Exit(1)


@app.command("show")
def bench_show(result_file: Path = typer.Argument(Path("bench.json")),
               as_markdown: bool = typer.Option(False, "--markdown", help="a Markdown table and notes")):
    """Print a saved `bench run` result again."""
    from mcpworld.bench.run import BenchResult
    from mcpworld.bench.show import markdown, print_result

    try:
        result = BenchResult.model_validate_json(result_file.read_text())
    except (OSError, ValueError) as e:
        fail(f"{result_file}: not a bench result ({e})")
    if as_markdown:
        print(markdown(result))
    else:
        print_result(result, console)


@app.command("startup")
def bench_startup(task_id: Optional[str] = typer.Option(None, "--task", help="the task whose start-up is measured "
                                                                             "(default: the first app's bench task)"),
                  trials: int = typer.Option(3, min=1, help="null-agent trials per backend (medians are reported)"),
                  cold: bool = typer.Option(False, help="also rebuild the images from scratch (minutes)"),
                  as_json: bool = typer.Option(False, "--json")):
    """Start-up cost of a trial, local backend (baseline) against docker: environment up, snapshot
    restore, app ready, teardown; and the image build, cached and (--cold) from scratch."""
    from mcpworld.bench.run import bench_tasks
    from mcpworld.bench.startup import PHASES, startup

    apps, tasks = load()
    if task_id is None:
        task_id = next((rt.key for rt in bench_tasks(tasks).values()), None)
        if task_id is None:
            fail("no app declares a [bench] task; name one with --task")
    if task_id not in tasks:
        fail(f"unknown task '{task_id}'")
    check_available(tasks[task_id].app)
    local, docker = startup(tasks[task_id], trials, cold, log=lambda m: err.print(m, highlight=False))
    if as_json:
        console.print_json(json.dumps([dataclasses.asdict(local), dataclasses.asdict(docker)]))
        return
    table = Table("phase (median s)", "local", "docker", "docker / local",
                  title=f"start-up of {task_id}, {trials} null trial(s) per backend")
    for p in PHASES:
        lo, do = local.phases.get(p), docker.phases.get(p)
        ratio = f"{do / lo:.2f}x" if lo and do is not None else "-"
        table.add_row(p.removesuffix("_s"), f"{lo:.2f}" if lo is not None else "-",
                      f"{do:.2f}" if do is not None else "-", ratio)
    table.add_row("image build, cached", "-", f"{docker.image_cached_s:.2f}", "-")
    if docker.image_cold_s is not None:
        table.add_row("image build, cold", "-", f"{docker.image_cold_s:.1f}", "-")
    console.print(table)
    for fig in (local, docker):
        for f in fig.failures:
            err.print(f"[yellow]{fig.backend} trial failed[/yellow] {f}")
