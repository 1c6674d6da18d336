"""`mcpworld hooks trace|check`: the workflow for writing an app's hooks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from mcpworld import paths
from mcpworld.cli.common import check_available, check_modes, console, err, fail, load, select

app = typer.Typer(no_args_is_help=True, help="Write hooks: trace an app's exported functions, check a task's key steps.")


@app.command("trace")
def hooks_trace(
    app_id: str = typer.Option(..., "--app", help="the app (started from its first task's snapshot)"),
    pattern: str = typer.Option(..., help="glob(s) of exported function names, comma-separated, e.g. 'lib_do_*,lib_make'"),
    module: str = typer.Option("*", help="glob of module names, e.g. 'libfoo.so*'"),
    out: Optional[Path] = typer.Option(None, help="also save every call as JSONL"),
    seconds: Optional[float] = typer.Option(None, help="stop after this long (default: Ctrl-C)"),
):
    """Start the app and print every call of the matching exports, live, while you use it."""
    from mcpworld.hooks_cli import trace_app

    _, tasks = load()
    rts = [rt for rt in tasks.values() if rt.app.id == app_id]
    if not rts:
        fail(f"no tasks for app '{app_id}' to take a starting state from")
    check_available(rts[0].app)
    trial_dir = paths.new_run_dir(f"trace-{app_id}")
    try:
        n = asyncio.run(trace_app(rts[0], pattern, module, out, seconds, trial_dir, err))
    except RuntimeError as e:
        fail(str(e), 1)
    err.print(f"{n} call(s) traced" + (f", saved to {out}" if out else ""))


@app.command("check")
def hooks_check(task: str, mode: str = typer.Option("mcp", "--mode", "-m"),
                solution: Optional[str] = typer.Option(None, help="replay this near miss or alternative (its id) "
                                                                  "instead of the oracle; it runs in its own mode")):
    """Run the task's oracle (or one of its near misses or alternatives) and show which key step fired from
    which event, and what changed in the app's state."""
    from mcpworld.agents import make_agent
    from mcpworld.trial import Trial, TrialOptions

    check_modes([mode])
    _, tasks = load()
    rt = select(tasks, [task], [])[0]
    check_available(rt.app)
    if solution:
        try:
            mode = str(rt.task.solution(solution).mode)
        except KeyError:
            fail(f"{task} has no near miss or alternative '{solution}'")
    out = paths.new_run_dir("check")
    trial = Trial(rt, make_agent("oracle", solution=solution), TrialOptions(mode=mode), out)
    result = asyncio.run(trial.run())
    events = {(e["stream"], e["seq"]): e for e in map(json.loads, trial.dir.events.read_text().splitlines())}
    table = Table(title=f"{task} ({mode}): {'pass' if result.success else 'fail'}")
    for col in ("key step", "reached", "event", "source", "payload"):
        table.add_column(col)
    for s in result.verdict.key_steps:
        e = events.get((s.event_stream, s.event_seq), {})
        table.add_row(s.id, "yes" if s.reached else "no", s.event_name or "-", e.get("source", "-"),
                      json.dumps(e.get("payload", {}))[:80] if e else (s.error or "-"))
    console.print(table)
    _print_state_changes(rt, list(events.values()))
    console.print(f"verdict: {result.verdict.reason}; events: {trial.dir.events}")
    raise typer.Exit(0 if result.success else 1)


def _print_state_changes(rt, events: list[dict]) -> None:
    """What the oracle changed in the queried state, and whether the task's success.changes allows it:
    the material for writing `success.changes`."""
    from evaluator.statediff import collateral, diff

    states = [e["payload"] for e in events if e.get("source") == "query"]
    spec = rt.state_diff
    if spec is None or len(states) < 2:
        return
    changes = diff(states[0], states[-1], spec.keys, spec.ignore, spec.sets)
    bad = {c.path for c in collateral(changes, spec.allowed)}
    console.print(f"state changes from start to end ({len(changes)}; success.changes allows "
                  f"{len(changes) - len(bad)}):", highlight=False)
    for c in changes:
        console.print(f"  {'[red]not allowed[/red]' if c.path in bad else 'allowed'}  {c.brief()}", highlight=False)
