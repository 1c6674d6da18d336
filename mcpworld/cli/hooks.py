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
    """What the solution changed in the queried state, record by record, and how each change was matched
    to the task's expected changes: the material for writing `success.expect`."""
    from evaluator import delta

    states = [e["payload"] for e in events if e.get("source") == "query"]
    spec = rt.state_diff
    if spec is None or len(states) < 2:
        return
    shape = spec.shape
    found = delta.changes(states[0], states[-1], shape)
    out = delta.match(found, spec.expected, spec.tolerances, states[0], shape)
    matched = {path: label for label, path in out.matched}
    tolerated = dict(out.tolerated)
    console.print(f"state changes from start to end ({len(found)}):", highlight=False)
    for c in found:
        how = (f"expected ({matched[c.path]})" if c.path in matched else f"tolerated ({tolerated[c.path]})"
               if c.path in tolerated else "[red]collateral[/red]")
        console.print(f"  {c.brief()}  {how}", highlight=False, soft_wrap=True)
    for line in out.unmet:
        console.print(f"  [red]expected, not made[/red]: {line}", highlight=False, soft_wrap=True)
