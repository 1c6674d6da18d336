"""The `mcpworld` command line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from mcpworld import paths
from mcpworld.config.load import load_apps, load_tasks
from mcpworld.errors import ConfigErrors, MCPWorldError

app = typer.Typer(no_args_is_help=True, add_completion=False, help="A white-box testbed for computer-use agents.")
tasks_app = typer.Typer(no_args_is_help=True, help="List, validate and show tasks.")
app.add_typer(tasks_app, name="tasks")
apps_app = typer.Typer(no_args_is_help=True, help="List and install apps.")
app.add_typer(apps_app, name="apps")
images_app = typer.Typer(no_args_is_help=True, help="Build and list the container images (--backend docker).")
app.add_typer(images_app, name="images")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: figures next to a baseline measured in the same run.")
app.add_typer(bench_app, name="bench")
hooks_app = typer.Typer(no_args_is_help=True, help="Write hooks: trace an app's exported functions, check a task's key steps.")
app.add_typer(hooks_app, name="hooks")
console = Console()
err = Console(stderr=True)


def _load(tasks_dir: Path | None = None):
    try:
        apps = load_apps()
        return apps, load_tasks(tasks_dir or paths.TASKS_DIR, apps)
    except ConfigErrors as e:
        for x in e.errors:
            err.print(f"[red]error[/red] {x}", highlight=False, soft_wrap=True)
        raise typer.Exit(2)


def _select(tasks: dict, task_ids: list[str], app_ids: list[str]):
    if not task_ids and not app_ids:
        return list(tasks.values())
    chosen = []
    for t in task_ids:
        if t not in tasks:
            err.print(f"[red]error[/red] unknown task '{t}' (e.g. {', '.join(list(tasks)[:5])})")
            raise typer.Exit(2)
        chosen.append(tasks[t])
    for a in app_ids:
        found = [rt for rt in tasks.values() if rt.app.id == a and rt not in chosen]
        if not found and not any(rt.app.id == a for rt in chosen):
            err.print(f"[red]error[/red] no tasks for app '{a}'")
            raise typer.Exit(2)
        chosen.extend(found)
    return chosen


@app.command()
def run(
    mode: list[str] = typer.Option(["hybrid"], "--mode", "-m", help="gui, mcp or hybrid (repeatable)"),
    app_id: list[str] = typer.Option([], "--app", help="run all tasks of an app (repeatable)"),
    task: list[str] = typer.Option([], "--task", "-t", help="run one task, e.g. anki/161 (repeatable)"),
    agent: str = typer.Option("oracle", help="oracle, null, claude or command"),
    trials: int = typer.Option(1, min=1),
    parallel: int = typer.Option(1, min=1, help="environments side by side (see `mcpworld bench parallel`)"),
    out: Optional[Path] = typer.Option(None, help="run directory (default runs/<time>-<agent>)"),
    no_bash: bool = typer.Option(False, "--no-bash", help="drop the bash and edit tools"),
    tools: Optional[str] = typer.Option(None, help="comma-separated tool names to keep (after the mode filter)"),
    timeout: Optional[float] = typer.Option(None, help="seconds per trial (default: the task's)"),
    max_steps: Optional[int] = typer.Option(None, help="agent step cap (default: the task's)"),
    model: Optional[str] = typer.Option(None, help="model for the claude agent"),
    agent_command: Optional[str] = typer.Option(None, "--command", help="argv for the command agent; {prompt} is one slot"),
    backend: str = typer.Option("local", help="local (Xvfb on this machine) or docker (one container per trial)"),
    desktop: str = typer.Option("xfce", help="docker: the desktop image, xfce or kde"),
    gpu: str = typer.Option("auto", help="docker: auto (what the host has), none (software GL) or nvidia"),
    app_build: Optional[Path] = typer.Option(None, help="docker: a host folder with the app's own build (bin/, lib/), "
                                                        "mounted read-only and put first on PATH"),
):
    """Run tasks with an agent and print SR and KSCR per task and overall."""
    from mcpworld.runner import declared, plan, run_all
    from mcpworld.trial import TrialOptions

    for m in mode:
        if m not in ("gui", "mcp", "hybrid"):
            err.print(f"[red]error[/red] --mode '{m}' is not one of gui, mcp, hybrid")
            raise typer.Exit(2)
    _, tasks = _load()
    chosen = _select(tasks, task, app_id)
    if backend not in ("local", "docker"):
        err.print(f"[red]error[/red] --backend '{backend}' is not one of local, docker")
        raise typer.Exit(2)
    if app_build is not None and not app_build.is_dir():
        err.print(f"[red]error[/red] --app-build {app_build}: no such folder")
        raise typer.Exit(2)
    opts = TrialOptions(no_bash=no_bash, tools=frozenset(t.strip() for t in tools.split(",")) if tools else None,
                        timeout=timeout, max_steps=max_steps, backend=backend, desktop=desktop, gpu=gpu,
                        app_build=app_build)
    agent_options = {}
    if agent == "claude" and model:
        agent_options["model"] = model
    if agent == "command":
        if not agent_command:
            err.print("[red]error[/red] --agent command needs --command 'ARGV with {prompt}'")
            raise typer.Exit(2)
        agent_options["command"] = agent_command
    out = out or paths.new_run_dir(agent)
    total = len(plan(declared(chosen, backend)[0], mode, trials))
    if total == 0:
        err.print("[red]error[/red] nothing to run: no selected task declares the chosen mode(s)")
        raise typer.Exit(2)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=False) as progress:
        bar = progress.add_task("starting", total=total)

        def on_start(label: str) -> None:
            progress.update(bar, description=label)

        def on_view(url: str) -> None:
            progress.console.print(f"live view: {url}", highlight=False)

        opts.on_view = on_view

        def on_trial(result, done, total_) -> None:
            mark = "[green]pass[/green]" if result.success else f"[red]fail[/red] ({result.failure})"
            progress.console.print(f"{result.task} {result.mode} #{result.trial}: {mark} "
                                   f"kscr={result.kscr:.2f} {result.timings.total_s:.1f}s", highlight=False)
            progress.advance(bar)

        try:
            summary = asyncio.run(run_all(chosen, mode, agent, out, trials, opts, agent_options, on_trial, on_start,
                                          parallel=parallel))
        except MCPWorldError as e:
            err.print(f"[red]error[/red] {e}")
            raise typer.Exit(1)
    from mcpworld.report.text import print_report

    print_report(summary, console)
    console.print(f"results: {out}  (mcpworld report {out} --html report.html)")


@app.command()
def view(run_dir: Path, open_browser: bool = typer.Option(False, "--open", help="open it in a web browser")):
    """The live view (noVNC) of the trial a docker run is on now."""
    info_file = run_dir / "view.json"
    if not info_file.exists():
        err.print(f"[red]error[/red] {run_dir} has no live view (only --backend docker runs have one)")
        raise typer.Exit(2)
    info = json.loads(info_file.read_text())
    from mcpworld import images
    from mcpworld.envs.docker import LABEL_ENV

    running = images.docker_client().containers.list(filters={"label": f"{LABEL_ENV}={info['env']}"})
    if not running:
        err.print(f"the trial {info['trial']} has ended; its desktop is gone (last view: {info['url']})")
        raise typer.Exit(1)
    console.print(f"{info['trial']}: {info['url']}", highlight=False)
    if open_browser:
        import webbrowser
        webbrowser.open(info["url"])


def _require_run_dirs(run_dirs: list[Path]) -> None:
    for d in run_dirs:
        if not (d / "trials").is_dir():
            err.print(f"[red]error[/red] {d} is not a run directory (no trials/)")
            raise typer.Exit(2)


def _report_or_exit(run_dirs: list[Path], step_cap: int | None = None, prices: Path | None = None):
    from mcpworld.report.build import build, load_runs
    from mcpworld.report.prices import load_prices

    _require_run_dirs(run_dirs)
    try:
        table = load_prices(prices)
    except ValueError as e:
        err.print(f"[red]error[/red] --prices {e}")
        raise typer.Exit(2)
    return build(*load_runs(run_dirs), step_cap=step_cap, prices=table)


@app.command()
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
    from mcpworld.report.text import print_report, trials_csv

    rep = _report_or_exit(run_dirs, step_cap, prices)
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


@app.command()
def compare(
    run_a: Path, run_b: Path,
    mode_a: Optional[str] = typer.Option(None, help="the mode to take from RUN_A (needed when the runs' modes differ)"),
    mode_b: Optional[str] = typer.Option(None, help="the mode to take from RUN_B"),
    as_json: bool = typer.Option(False, "--json"),
):
    """Paired comparison of two runs (or two modes of one run) per difficulty, as in the paper's Table 9."""
    from mcpworld.report.compare import compare as paired
    from mcpworld.runner import load_results

    _require_run_dirs([run_a, run_b])
    try:
        cmp = paired(load_results(run_a), load_results(run_b), str(run_a), str(run_b), mode_a, mode_b)
    except ValueError as e:
        err.print(f"[red]error[/red] {e}")
        raise typer.Exit(2)
    if as_json:
        print(cmp.model_dump_json(indent=2))
        return
    label_a = f"A{' ' + mode_a if mode_a else ''}"
    label_b = f"B{' ' + mode_b if mode_b else ''}"
    table = Table(title=f"A = {run_a}, B = {run_b}; paired on {cmp.paired_on}", title_justify="left")
    for col in ("difficulty", "mode", "pairs", f"SR {label_a}", f"SR {label_b}", "A - B", "95% CI (Agresti-Min)", "A only / B only"):
        table.add_column(col, justify="left" if col in ("difficulty", "mode") else "right")
    last = None
    for r in cmp.rows:
        if last is not None and r.difficulty != last:
            table.add_section()
        table.add_row(r.difficulty if r.difficulty != last else "", r.mode, str(r.pairs), f"{r.sr_a:.2%}", f"{r.sr_b:.2%}",
                      f"{r.difference:+.2%}", f"[{r.low:+.1%}, {r.high:+.1%}]", f"{r.only_a} / {r.only_b}")
        last = r.difficulty
    console.print(table)
    if cmp.unpaired_a or cmp.unpaired_b:
        console.print(f"left out (no partner): {cmp.unpaired_a} trial(s) of A, {cmp.unpaired_b} of B")


@tasks_app.command("list")
def tasks_list(app_id: Optional[str] = typer.Option(None, "--app")):
    """One line per task."""
    _, tasks = _load()
    table = Table()
    for col in ("task", "template", "difficulty", "human steps", "key steps", "modes", "instruction"):
        table.add_column(col)
    for key, rt in tasks.items():
        if app_id and rt.app.id != app_id:
            continue
        t = rt.task
        table.add_row(key, str(t.template), t.difficulty, str(t.human_step_count), str(len(t.key_steps)),
                      ",".join(t.modes), rt.instruction[:70] + ("..." if len(rt.instruction) > 70 else ""))
    console.print(table)


@tasks_app.command("validate")
def tasks_validate(tasks_dir: Optional[Path] = typer.Option(None, "--tasks-dir")):
    """Check every app and task; errors name the file, the field and the problem."""
    apps, tasks = _load(tasks_dir)
    console.print(f"ok: {len(apps)} app(s), {len(tasks)} task(s)")


@tasks_app.command("show")
def tasks_show(task_id: str):
    """The resolved task: instruction, key steps, success, oracles."""
    _, tasks = _load()
    if task_id not in tasks:
        err.print(f"[red]error[/red] unknown task '{task_id}'")
        raise typer.Exit(2)
    rt = tasks[task_id]
    console.print(f"[b]{task_id}[/b] (template {rt.task.template}, {rt.task.difficulty}, "
                  f"{rt.task.human_step_count} human steps)\n{rt.instruction}\n")
    console.print_json(json.dumps(rt.raw))


@tasks_app.command("record-windows")
def tasks_record_windows(task_ids: list[str] = typer.Argument(..., help="e.g. obs/95"),
                         write: bool = typer.Option(False, "--write", help="store them in the task files")):
    """Run GUI oracles once and note which window has the focus after each step.

    With --write, each step's `window` is set, and the oracle will wait for that window from then on."""
    from mcpworld.oracle_windows import record, write as write_windows

    _, tasks = _load()
    out = paths.new_run_dir("record-windows")
    failed = 0
    for rt in _select(tasks, task_ids, []):
        if not rt.task.oracle.gui:
            err.print(f"[yellow]skip[/yellow] {rt.key}: no GUI oracle")
            continue
        try:
            patterns = asyncio.run(record(rt, out / rt.key.replace('/', '-')))
        except RuntimeError as e:
            err.print(f"[red]error[/red] {e}")
            failed += 1
            continue
        for i, (step, pattern) in enumerate(zip(rt.task.oracle.gui, patterns)):
            console.print(f"{rt.key} [{i}] {step.args.get('action')} {step.args.get('text') or step.args.get('coordinate') or ''}"
                          f" -> {pattern}", highlight=False)
        if write:
            console.print(f"wrote {write_windows(rt, patterns)}")
    if failed:
        raise typer.Exit(1)


@apps_app.command("list")
def apps_list():
    """The apps, whether each is installed here, and its task count."""
    from mcpworld.install import is_installed

    apps, tasks = _load()
    table = Table()
    for col in ("app", "name", "installed", "tasks", "MCP servers", "events"):
        table.add_column(col)
    for a in apps.values():
        table.add_row(a.id, a.name, "yes" if is_installed(a) else "no", str(sum(rt.app.id == a.id for rt in tasks.values())),
                      ", ".join(a.mcp_servers) or "-", str(len(a.events)))
    console.print(table)


@apps_app.command("install")
def apps_install(app_id: list[str] = typer.Option([], "--app", help="default: every app")):
    """Install the Debian and PyPI packages an app needs (skips what is already there)."""
    from mcpworld.install import install_app, is_installed

    apps = load_apps()
    for a in apps.values():
        if app_id and a.id not in app_id:
            continue
        if is_installed(a):
            err.print(f"{a.id}: installed")
            continue
        install_app(a, log=lambda m: err.print(f"{a.id}: {m}"))
        if not is_installed(a):
            err.print(f"[red]error[/red] {a.id}: still not usable after installing")
            raise typer.Exit(1)
        err.print(f"{a.id}: installed")


@images_app.command("build")
def images_build(desktop: list[str] = typer.Option(["xfce"], "--desktop", help="xfce or kde (repeatable)"),
                 app_id: list[str] = typer.Option([], "--app", help="app layers to build (default: every app)"),
                 base: str = typer.Option("auto", help="base image: 'auto' (debian:bookworm from a registry, else "
                                                       "debootstrap of this machine's apt mirror), 'debootstrap', or an image name"),
                 force: bool = typer.Option(False, help="rebuild even if the inputs did not change")):
    """Build the desktop images and app layers; each is skipped while its inputs are unchanged."""
    from mcpworld import images

    apps = load_apps()
    unknown = [a for a in app_id if a not in apps]
    if unknown:
        err.print(f"[red]error[/red] unknown app {', '.join(unknown)} (known: {', '.join(apps)})")
        raise typer.Exit(2)
    client = images.docker_client()
    try:
        built = images.build_all(client, desktop, [apps[a] for a in app_id] if app_id else list(apps.values()),
                                 base, log=lambda m: err.print(m, highlight=False), force=force)
    except images.ImageBuildError as e:
        err.print(f"[red]error[/red] {e}", highlight=False)
        raise typer.Exit(1)
    table = Table("image", "size", "build")
    for b in built:
        table.add_row(b.tag, f"{b.size_mb:.0f} MB", "cached" if b.cached else f"{b.seconds:.0f}s")
    console.print(table)


@images_app.command("engine")
def images_engine():
    """Make sure a Docker engine answers: start dockerd if it is installed but not running."""
    from mcpworld import images

    try:
        images.start_engine(log=lambda m: err.print(m, highlight=False))
    except MCPWorldError as e:
        err.print(f"[red]error[/red] {e}")
        raise typer.Exit(1)
    console.print("Docker engine: ok")


@images_app.command("list")
def images_list():
    """The mcpworld images this Docker engine has."""
    from mcpworld import images

    table = Table("image", "size", "created", "inputs")
    for row in images.describe(images.docker_client()):
        table.add_row(row["tag"], f"{row['size_mb']} MB", row["created"], row["inputs"])
    console.print(table)


@bench_app.command("run")
def bench_run(part: list[str] = typer.Option([], "--part", help="reset, latency, screenshot, gateway, parallel "
                                                                 "(repeatable; default: all)"),
              size: str = typer.Option("full", help="full (>= 1,000 events per source, 1-6 environments), quick "
                                                     "(a few minutes) or smoke (every figure once, for tests)"),
              out: Path = typer.Option(Path("bench.json"), help="where the figures go (JSON)")):
    """Reset, milestone latency, screenshots, gateway overhead and parallel environments, each figure
    (min/median/p95/p99) next to a baseline measured in the same run."""
    from mcpworld.bench.run import PARTS, SIZES, run_sync

    if size not in SIZES:
        err.print(f"[red]error[/red] --size {size}: one of {', '.join(SIZES)}")
        raise typer.Exit(2)
    parts = part or list(PARTS)
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        err.print(f"[red]error[/red] unknown part(s) {', '.join(unknown)} (known: {', '.join(PARTS)})")
        raise typer.Exit(2)
    result = run_sync(parts, size, log=lambda m: err.print(m, highlight=False))
    out.write_text(result.model_dump_json(indent=2))
    from mcpworld.bench.show import print_result

    print_result(result, console)
    for p, e in result.errors.items():
        err.print(f"[red]{p} failed[/red] {e}", highlight=False)
    console.print(f"figures: {out} ({result.seconds:.0f}s)")
    if result.errors:
        raise typer.Exit(1)


@bench_app.command("show")
def bench_show(result_file: Path = typer.Argument(Path("bench.json")),
               as_markdown: bool = typer.Option(False, "--markdown", help="a Markdown table and notes")):
    """Print a saved `bench run` result again."""
    from mcpworld.bench.run import BenchResult
    from mcpworld.bench.show import markdown, print_result

    try:
        result = BenchResult.model_validate_json(result_file.read_text())
    except (OSError, ValueError) as e:
        err.print(f"[red]error[/red] {result_file}: not a bench result ({e})")
        raise typer.Exit(2)
    if as_markdown:
        print(markdown(result))
    else:
        print_result(result, console)


@bench_app.command("startup")
def bench_startup(task_id: str = typer.Option("anki/161", "--task", help="the task whose start-up is measured"),
                  trials: int = typer.Option(3, min=1, help="null-agent trials per backend (medians are reported)"),
                  cold: bool = typer.Option(False, help="also rebuild the images from scratch (minutes)"),
                  as_json: bool = typer.Option(False, "--json")):
    """Start-up cost of a trial, local backend (baseline) against docker: environment up, snapshot
    restore, app ready, teardown; and the image build, cached and (--cold) from scratch."""
    import dataclasses

    from mcpworld.bench.startup import PHASES, startup

    _, tasks = _load()
    if task_id not in tasks:
        err.print(f"[red]error[/red] unknown task '{task_id}'")
        raise typer.Exit(2)
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


@hooks_app.command("trace")
def hooks_trace(
    app_id: str = typer.Option(..., "--app", help="the app (started from its first task's snapshot)"),
    pattern: str = typer.Option(..., help="glob(s) of exported function names, comma-separated, e.g. 'obs_source_*,obs_scene_create'"),
    module: str = typer.Option("*", help="glob of module names, e.g. 'libobs.so*'"),
    out: Optional[Path] = typer.Option(None, help="also save every call as JSONL"),
    seconds: Optional[float] = typer.Option(None, help="stop after this long (default: Ctrl-C)"),
):
    """Start the app and print every call of the matching exports, live, while you use it."""
    from mcpworld.hooks_cli import trace_app

    _, tasks = _load()
    rts = [rt for rt in tasks.values() if rt.app.id == app_id]
    if not rts:
        err.print(f"[red]error[/red] no tasks for app '{app_id}' to take a starting state from")
        raise typer.Exit(2)
    trial_dir = paths.new_run_dir(f"trace-{app_id}")
    try:
        n = asyncio.run(trace_app(rts[0], pattern, module, out, seconds, trial_dir, err))
    except RuntimeError as e:
        err.print(f"[red]error[/red] {e}")
        raise typer.Exit(1)
    err.print(f"{n} call(s) traced" + (f", saved to {out}" if out else ""))


@hooks_app.command("check")
def hooks_check(task: str, mode: str = typer.Option("mcp", "--mode", "-m")):
    """Run the task's oracle and show which key step fired from which event."""
    from mcpworld.agents import make_agent
    from mcpworld.trial import Trial, TrialOptions

    _, tasks = _load()
    rt = _select(tasks, [task], [])[0]
    out = paths.new_run_dir("check")
    result = asyncio.run(Trial(rt, make_agent("oracle"), TrialOptions(mode=mode), out).run())
    events = {(e["stream"], e["seq"]): e for e in map(json.loads, (out / "events.jsonl").read_text().splitlines())}
    table = Table(title=f"{task} ({mode}): {'pass' if result.success else 'fail'}")
    for col in ("key step", "reached", "event", "source", "payload"):
        table.add_column(col)
    for s in result.verdict.key_steps:
        e = events.get((s.event_stream, s.event_seq), {})
        table.add_row(s.id, "yes" if s.reached else "no", s.event_name or "-", e.get("source", "-"),
                      json.dumps(e.get("payload", {}))[:80] if e else (s.error or "-"))
    console.print(table)
    console.print(f"verdict: {result.verdict.reason}; events: {out / 'events.jsonl'}")
    raise typer.Exit(0 if result.success else 1)


@app.command()
def gateway(
    task: str = typer.Option(..., "--task", "-t"),
    mode: str = typer.Option("hybrid", "--mode", "-m"),
    transport: str = typer.Option("stdio", help="stdio or http"),
    port: int = typer.Option(0, help="HTTP port (default: a free one)"),
    no_bash: bool = typer.Option(False, "--no-bash"),
    out: Optional[Path] = typer.Option(None, help="trial directory for events, calls and the verdict"),
    backend: str = typer.Option("local", help="local or docker"),
):
    """Bring up the task's environment and serve its tool list as an MCP server; evaluate when the client leaves."""
    from mcpworld.serve import serve_task

    _, tasks = _load()
    rt = _select(tasks, [task], [])[0]
    if transport not in ("stdio", "http"):
        err.print("[red]error[/red] --transport must be stdio or http")
        raise typer.Exit(2)
    out = out or paths.new_run_dir("gateway")
    result = asyncio.run(serve_task(rt, mode, no_bash, transport, port, out, err, backend))
    err.print(f"verdict: {'pass' if result.success else 'fail'} kscr={result.kscr:.2f} ({out})")


if __name__ == "__main__":
    app()
