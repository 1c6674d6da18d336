"""`mcpworld run`, `mcpworld gateway` and `mcpworld view`: running trials."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Optional

import typer

from mcpworld import paths
from mcpworld.cli.common import check_available, check_backend, check_modes, console, err, fail, load, select
from mcpworld.errors import MCPWorldError
from mcpworld.heap import keep_heap


def run(
    mode: list[str] = typer.Option(["hybrid"], "--mode", "-m", help="gui, mcp or hybrid (repeatable)"),
    app_id: list[str] = typer.Option([], "--app", help="run all tasks of an app (repeatable)"),
    task: list[str] = typer.Option([], "--task", "-t", help="run one task, e.g. anki/161 (repeatable)"),
    agent: str = typer.Option("oracle", help="oracle, null, claude, openai or command"),
    trials: int = typer.Option(1, min=1),
    parallel: str = typer.Option("1", help="environments side by side, or auto: another starts while the machine "
                                 "has memory for its app's measured peak and CPU to spare (see `mcpworld bench`)"),
    out: Optional[Path] = typer.Option(None, help="run directory (default runs/<time>-<agent>)"),
    no_bash: bool = typer.Option(False, "--no-bash", help="drop the bash and edit tools"),
    tools: Optional[str] = typer.Option(None, help="comma-separated tool names to keep (after the mode filter)"),
    count_api_in_gui: bool = typer.Option(False, "--count-api-in-gui", help="gui mode: count key steps the app saw "
                                          "done through its API (flagged; the report shows SR both ways)"),
    timeout: Optional[float] = typer.Option(None, help="seconds per trial (default: the task's)"),
    max_steps: Optional[int] = typer.Option(None, help="agent step cap (default: the task's)"),
    model: Optional[str] = typer.Option(None, help="claude, openai: the model"),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="claude, openai: the API's URL (default: the "
                                           "SDK's), e.g. http://127.0.0.1:8000/v1 for a local vLLM server"),
    api_key_env: Optional[str] = typer.Option(None, "--api-key-env", help="claude, openai: the variable holding the "
                                              "API key (default ANTHROPIC_API_KEY, OPENAI_API_KEY)"),
    agent_option: list[str] = typer.Option([], "--agent-option", help="claude, openai: KEY=VALUE sent in every "
                                           "request (temperature=0, seed=1, max_tokens=2048; VALUE read as JSON "
                                           "where it parses) (repeatable)"),
    keep_screenshots: Optional[int] = typer.Option(None, "--keep-screenshots", min=0, help="claude, openai: the "
                                                   "newest screenshots kept in the history the model gets (default 3)"),
    agent_command: Optional[str] = typer.Option(None, "--command", help="argv for the command agent; {prompt} is one slot"),
    backend: str = typer.Option("local", help="local (Xvfb on this machine) or docker (one container per trial)"),
    desktop: str = typer.Option("xfce", help="docker: the desktop image, xfce or kde"),
    gpu: str = typer.Option("auto", help="docker: auto (what the host has), none (software GL) or nvidia"),
    app_build: Optional[Path] = typer.Option(None, help="a build of the app (`mcpworld apps build APP --from-source`: "
                                                        "builds/<id>/) put first on PATH and LD_LIBRARY_PATH; "
                                                        "mounted read-only in containers"),
    executor: str = typer.Option("local", help="local (this machine) or ray (each trial a Ray task on a cluster)"),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="ray: the cluster's address "
                                              "(default: the cluster this machine joined)"),
    resume: Optional[Path] = typer.Option(None, "--resume", help="continue this killed or interrupted run: its "
                                          "finished trials are kept, the rest run under its own configuration"),
    rerun_testbed: bool = typer.Option(False, "--rerun-testbed", help="with --resume: run again the trials that "
                                       "failed on the testbed's side (set-up, an app crash, a probe, out of memory)"),
):
    """Run tasks with an agent and print SR and KSCR per task and overall."""
    from mcpworld.cli.progress import TrialProgress
    from mcpworld.report.text import print_report
    from mcpworld.runner import declared, plan, run_all, run_config, write_summary
    from mcpworld.trial import TrialOptions

    check_modes(mode)
    check_backend(backend)
    if parallel != "auto" and not (parallel.isdigit() and int(parallel) >= 1):
        fail(f"--parallel must be a whole number from 1, or auto (not {parallel!r})")
    parallel = parallel if parallel == "auto" else int(parallel)
    if app_build is not None and not app_build.is_dir():
        fail(f"--app-build {app_build}: no such folder")
    opts = TrialOptions(no_bash=no_bash, tools=frozenset(t.strip() for t in tools.split(",")) if tools else None,
                        timeout=timeout, max_steps=max_steps, backend=backend, desktop=desktop, gpu=gpu,
                        app_build=app_build, count_api_in_gui=count_api_in_gui)
    agent_options = _model_agent_options(agent, model, base_url, api_key_env, agent_option, keep_screenshots)
    if agent == "command":
        if not agent_command or "{prompt}" not in agent_command:
            fail("--agent command needs --command 'ARGV with {prompt}' (the slot the task's instruction goes in)")
        agent_options["command"] = agent_command
    if resume is None:  # a resumed run's agent is the one its run.json names: checked once that is read
        _check_agent(agent, agent_options)
    _, tasks = load()
    resumed = None
    if rerun_testbed and resume is None:
        fail("--rerun-testbed reruns trials of a run: give the run with --resume RUN")
    if resume is not None:
        chosen, (agent, agent_options, mode, trials, opts), resumed = _resumed_run(
            resume, tasks, task, app_id, run_config(agent, agent_options, mode, trials, opts), opts, rerun_testbed)
        out = resume
    else:
        chosen = select(tasks, task, app_id)
    out = out or paths.new_run_dir(agent)
    here = executor == "local"
    runnable, chosen_info = declared(chosen, opts.backend, here, app_build=opts.app_build)
    total = len(plan(runnable, mode, trials)) - (len(resumed.finished) if resumed else 0)
    not_runnable = _not_runnable(chosen_info)
    if resumed is not None:
        unfinished = len(resumed.set_aside) - len(resumed.rerun_testbed)
        err.print(f"resuming {out}: {len(resumed.finished)} finished trial(s) kept, {unfinished} unfinished and "
                  f"{len(resumed.rerun_testbed)} testbed failure(s) set aside in {out / 'set_aside'}, {total} to run",
                  highlight=False)
        if total == 0:
            summary = write_summary(out)
            print_report(summary, console)
            console.print(f"results: {out}  (mcpworld report {out} --html report.html)")
            return
        _check_agent(agent, agent_options)
    if total == 0:
        fail("nothing to run: " + ("; ".join(not_runnable) if not runnable and not_runnable
                                   else "no selected task declares the chosen mode(s)"))
    if not_runnable:
        err.print("declared but not run (STRICT counts them as failures): " + "; ".join(not_runnable), highlight=False,
                  soft_wrap=True)
    runner_for = None
    if executor == "ray" and parallel == "auto":
        fail("--parallel auto admits environments on this machine; on Ray each node's mcpworld_env slots do")
    if executor == "ray":
        from mcpworld.ray_executor import RayExecutor

        try:
            runner_for = RayExecutor(ray_address)
            runner_for.check(declared(chosen, opts.backend, here=False)[0], opts.backend)
        except (MCPWorldError, ConnectionError) as e:
            fail(f"--executor ray: {e}")
    elif executor != "local":
        fail("--executor must be local or ray")
    with TrialProgress(total, err) as progress:
        opts.on_view = lambda url: progress.print(f"live view: {url}")
        try:
            keep_heap()
            summary = asyncio.run(run_all(chosen, mode, agent, out, trials, opts, agent_options,
                                          on_trial=lambda result, done, n: progress.finished(result),
                                          on_start=progress.started, parallel=parallel, resumed=resumed,
                                          executor=runner_for))
        except MCPWorldError as e:
            fail(str(e), 1)
    print_report(summary, console)
    console.print(f"results: {out}  (mcpworld report {out} --html report.html)")


def _model_agent_options(agent: str, model: str | None, base_url: str | None, api_key_env: str | None,
                         agent_option: list[str], keep_screenshots: int | None) -> dict:
    """What the model agents take from the command line (the key's variable, never the key: run.json
    records these options)."""
    given = {"--model": model, "--base-url": base_url, "--api-key-env": api_key_env, "--agent-option": agent_option,
             "--keep-screenshots": keep_screenshots is not None}
    if agent not in ("claude", "openai"):
        if any(given.values()):
            fail(f"{', '.join(k for k, v in given.items() if v)}: for --agent claude or openai, not {agent}")
        return {}
    request = {}
    for item in agent_option:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            fail(f"--agent-option {item!r}: expected KEY=VALUE")
        try:
            request[key.strip()] = json.loads(value)
        except ValueError:
            request[key.strip()] = value  # a plain string
    options = {"model": model, "base_url": base_url, "api_key_env": api_key_env, "request": request or None,
               "keep_screenshots": keep_screenshots}
    return {k: v for k, v in options.items() if v is not None}


def _check_agent(name: str, options: dict) -> None:
    """Exit 2 with what the agent lacks (unknown name, API key, a server that does not answer) before any
    environment starts, not as an agent_error in every trial."""
    from mcpworld.agents import AgentError, make_agent

    try:
        make_agent(name, **options).check()
    except (ValueError, TypeError, AgentError) as e:
        fail(str(e))


def _not_runnable(info: dict[str, dict]) -> list[str]:
    """The chosen tasks that cannot run, a line per reason (not_runnable_lines)."""
    from mcpworld.report.build import not_runnable_lines, status_reason

    return not_runnable_lines({key: status_reason(d) for key, d in info.items() if d["status"] != "ready"})


def _resumed_run(run_dir: Path, tasks: dict, task_ids: list[str], app_ids: list[str], asked: dict, opts,
                 rerun_testbed: bool = False):
    """The run's own tasks and configuration (refused with what differs when the command line asks for
    another), with its directory settled for resuming (mcpworld.resume)."""
    import dataclasses

    from mcpworld.resume import config_differences, settle, task_differences
    from mcpworld.rundir import RunDir
    from mcpworld.runner import run_config
    from mcpworld.trial import TrialOptions

    run = RunDir(run_dir)
    meta = run.meta()
    if not meta:
        fail(f"--resume {run_dir}: not a run directory (no run.json)")
    defaults = run_config("oracle", {}, ["hybrid"], 1, TrialOptions())
    # what the command line sets beyond its defaults must be what the run started with
    problems = config_differences(meta, {k: v for k, v in asked.items() if v != defaults.get(k)})
    keys = list(meta.get("declared") or meta.get("tasks") or {})
    if task_ids or app_ids:
        picked = [rt.key for rt in select(tasks, task_ids, app_ids)]
        if sorted(picked) != sorted(keys):
            problems.append(f"tasks: {len(keys)} when the run started, {len(picked)} chosen now")
    problems += task_differences(meta.get("tasks") or {}, tasks)
    missing = [k for k in keys if k not in tasks]
    if problems:
        fail(f"cannot resume {run_dir}: " + "; ".join(problems))
    chosen = [tasks[k] for k in keys if k not in missing]
    opts = dataclasses.replace(opts, no_bash=bool(meta.get("no_bash")),
                               tools=frozenset(meta["tools"]) if meta.get("tools") else None,
                               count_api_in_gui=bool(meta.get("count_api_in_gui")), timeout=meta.get("timeout"),
                               max_steps=meta.get("max_steps"), backend=meta.get("backend") or "local",
                               desktop=meta.get("desktop") or opts.desktop)
    config = (meta["agent"], meta.get("agent_options") or {}, meta["modes"], int(meta["trials"]), opts)
    return chosen, config, settle(run, rerun_testbed)


def view(run_dir: Path, open_browser: bool = typer.Option(False, "--open", help="open it in a web browser")):
    """The live view (noVNC) of the trial a docker run is on now."""
    from mcpworld.rundir import RunDir

    info_file = RunDir(run_dir).view
    if not info_file.exists():
        fail(f"{run_dir} has no live view (only --backend docker runs have one)")
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

    check_modes([mode])
    check_backend(backend)
    _, tasks = load()
    rt = select(tasks, [task], [])[0]
    check_available(rt.app)
    if transport not in ("stdio", "http"):
        fail("--transport must be stdio or http")
    out = out or paths.new_run_dir("gateway")
    keep_heap()
    result = asyncio.run(serve_task(rt, mode, no_bash, transport, port, out, err, backend))
    err.print(f"verdict: {'pass' if result.success else 'fail'} kscr={result.kscr:.2f} ({out})")


def register(app: typer.Typer) -> None:
    app.command()(run)
    app.command()(view)
    app.command()(gateway)
