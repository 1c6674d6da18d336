"""`mcpworld tasks ...`: list, validate, show, verify (prove and record), costs, record-windows."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from mcpworld import paths
from mcpworld.cli.common import check_backend, console, err, fail, load, select
from mcpworld.concurrency import gather_all
from mcpworld.heap import keep_heap

app = typer.Typer(no_args_is_help=True, help="List, validate, show and verify tasks.")


@app.command("list")
def tasks_list(app_id: Optional[str] = typer.Option(None, "--app")):
    """One line per task; a task that is not ready says its status and why before its instruction."""
    _, tasks = load()
    chosen = [rt for key, rt in tasks.items() if not app_id or rt.app.id == app_id]
    rows = [(rt.key, str(rt.task.template), rt.task.difficulty[0], str(rt.task.human_step_count or "-"),
             str(len(rt.task.key_steps)), ",".join(rt.task.modes), rt.task.status,
             rt.instruction if rt.task.status == "ready" else f"({rt.task.status_reason or rt.task.status}) {rt.instruction}")
            for rt in chosen]
    table = Table(box=None, pad_edge=False)
    heads = ("task", "tpl", "d", "steps", "keys", "modes", "status")
    widths = [max([len(col)] + [len(r[i]) for r in rows]) for i, col in enumerate(heads)]
    for i, col in enumerate(heads):
        table.add_column(col, no_wrap=True, justify="right" if i in (1, 3, 4) else "left", min_width=widths[i])
    # the instruction takes what the terminal has left, cut short with an ellipsis
    room = max(20, console.width - sum(widths) - 2 * len(heads) - 1)
    table.add_column("instruction", no_wrap=True, max_width=room)
    for r in rows:
        table.add_row(*r[:-1], r[-1] if len(r[-1]) <= room else r[-1][:room - 1] + "…")
    console.print(table)
    counts = {}
    for rt in chosen:
        counts[rt.task.status] = counts.get(rt.task.status, 0) + 1
    console.print(f"{len(chosen)} task(s) declared: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())),
                  highlight=False)


@app.command("validate")
def tasks_validate(tasks_dir: Optional[Path] = typer.Option(None, "--tasks-dir")):
    """Check every app and task; errors name the file, the field and the problem."""
    apps, tasks = load(tasks_dir)
    console.print(f"ok: {len(apps)} app(s), {len(tasks)} task(s)")


@app.command("show")
def tasks_show(task_id: str):
    """The resolved task: instruction, key steps, success, oracles."""
    _, tasks = load()
    if task_id not in tasks:
        fail(f"unknown task '{task_id}'")
    rt = tasks[task_id]
    console.print(f"[b]{task_id}[/b] (template {rt.task.template}, {rt.task.difficulty}, "
                  f"{rt.task.human_step_count} human steps)\n{rt.instruction}\n")
    console.print_json(json.dumps(rt.raw))


@app.command("verify")
def tasks_verify(app_id: list[str] = typer.Option([], "--app", help="verify an app's tasks (repeatable)"),
                 task: list[str] = typer.Option([], "--task", "-t", help="verify one task (repeatable)"),
                 parallel: int = typer.Option(1, min=1, help="trials side by side"),
                 backend: str = typer.Option("local", help="local: every declared mode; docker: one API mode, "
                                                           "added to the local record"),
                 only_stale: bool = typer.Option(False, "--stale", help="only tasks without a passing record "
                                                                        "for their current content"),
                 oldest: Optional[float] = typer.Option(None, "--oldest", metavar="MINUTES", help="only the tasks "
                                                        "proven longest ago under an older verdict path (the core "
                                                        "and the app's folders), as many as their last proofs took "
                                                        "in MINUTES one trial at a time"),
                 check: bool = typer.Option(False, "--check", help="run nothing: list the tasks whose current "
                                                                   "content lacks a passing record; exit 1 if any"),
                 mutants: bool = typer.Option(True, "--mutants/--no-mutants", help="also run the MCP oracle's "
                                              "mutants (locally; a record without them keeps its earlier ones)")):
    """Prove tasks: every declared mode's oracle passes and the null agent fails, recorded with the task's
    content hash in tasks/<app>/verified.json."""
    from mcpworld.envs import LOCAL
    from mcpworld.install import app_version
    from mcpworld.verify import by_proof_age, cut, load_records, record_seconds, runnable, stale

    check_backend(backend)
    _, tasks = load()
    chosen = [rt for rt in select(tasks, task, app_id) if rt.task.status == "ready"]
    versions = {rt.app.id: app_version(rt.app) for rt in chosen}
    records = {a: load_records(a) for a in versions}
    in_container = backend != LOCAL
    why = {rt.key: stale(rt, records[rt.app.id], versions[rt.app.id], in_container) for rt in chosen}
    if check:
        bad = {k: w for k, w in why.items() if w}
        for k, w in bad.items():
            console.print(f"{k}: {w}", highlight=False)
        console.print(f"{len(chosen) - len(bad)} of {len(chosen)} ready task(s) proven at their current content")
        _print_verdict_path_ages(chosen, records)
        raise typer.Exit(1 if bad else 0)
    if only_stale:
        chosen = [rt for rt in chosen if why[rt.key]]
    if oldest is not None:  # of those that can run here
        pool = runnable({rt.key: rt for rt in chosen})
        aged = by_proof_age(pool)
        costs = [record_seconds(records[pool[k].app.id].tasks.get(k)) for k in aged]
        chosen = [pool[k] for k in cut(aged, costs, oldest * 60)[0]]
    if in_container:  # a container proof is added to a current local one
        local_gaps = {rt.key: w for rt in chosen if (w := stale(rt, records[rt.app.id], versions[rt.app.id]))}
        for key, w in local_gaps.items():
            err.print(f"[yellow]skip[/yellow] {key}: {w}; verify it locally first", highlight=False)
        chosen = [rt for rt in chosen if rt.key not in local_gaps]
    if not chosen:
        console.print("nothing to verify")
        return
    keep_heap()
    failed = asyncio.run(_verify(chosen, versions, parallel, backend, mutants and backend == LOCAL))
    raise typer.Exit(1 if failed else 0)


def _print_verdict_path_ages(chosen: list, records: dict) -> None:
    """How many records were proven under the code that decides verdicts now (the core and the app's folders,
    mcpworld.verify.verdict_paths), and for the others the commit they were proven at. Not a failure: CI's
    rolling slice re-proves them under the current code in turn."""
    from mcpworld.verify import verdict_commit, verdict_digest

    digests = {a: verdict_digest(a) for a in records}
    older: dict[str, list[str]] = {}
    for rt in chosen:
        rec = records[rt.app.id].tasks.get(rt.key)
        if rec is not None and rec.verdict_digest != digests[rt.app.id]:
            older.setdefault(rec.verdict_commit or "before records named it", []).append(rt.key)
    console.print(f"{len(chosen) - sum(map(len, older.values()))} of {len(chosen)} proven under the current verdict "
                  f"path (the core and the app's folders; now at {', '.join(sorted({c for a in records if (c := verdict_commit(a))})) or '?'})",
                  highlight=False)
    for commit, keys in sorted(older.items(), key=lambda kv: -len(kv[1])):
        console.print(f"  {len(keys)} proven at {commit}: {', '.join(keys[:4])}{' ...' if len(keys) > 4 else ''}",
                      highlight=False)


async def _verify(chosen: list, versions: dict, parallel: int, backend: str, mutants: bool = False) -> int:
    from mcpworld.cli.progress import TrialProgress
    from mcpworld.mutation import mutation_mode, run_mutation
    from mcpworld.rundir import RunDir
    from mcpworld.verify import (jobs_for, load_records, proof_marks, proof_terms, proves, record_of, run_job,
                                 save_record, stale)

    out = paths.new_run_dir(f"verify-{backend}")
    jobs = {rt.key: jobs_for(rt, backend) for rt in chosen}
    gate = asyncio.Semaphore(parallel)
    # tasks in the order chosen, `parallel` at a time: each is recorded once its trials and mutants are done, so a
    # stopped verify keeps the tasks it finished (all at once, every task waited for the last one's trials)
    tasks_gate = asyncio.Semaphore(parallel)
    # what each record will name, as it was when this process loaded its code: a record names the content and the
    # code its trials ran with, not what the tree holds when they end
    marks = {rt.key: proof_marks(rt, versions[rt.app.id]) for rt in chosen}
    failed = 0
    with TrialProgress(sum(map(len, jobs.values())), err) as progress:
        async def one(job):
            async with gate:
                label = f"{job[0].key} {job[1]} {job[2]}"
                progress.started(label)
                result, retried = await run_job(job, out, backend)
                done = proves(job[2], result.success, result.failure)
                progress.finished(result.model_copy(update={"success": done}), label + (" (retried)" if retried else ""))
                return job, result, retried

        async def task_proof(rt):
            async with tasks_gate:
                await prove_task(rt)

        async def prove_task(rt):
            nonlocal failed
            outcomes = await gather_all(*(one(j) for j in jobs[rt.key]))
            previous = load_records(rt.app.id).tasks.get(rt.key)
            record = record_of(rt, outcomes, versions[rt.app.id], backend, previous)
            if mutants and mutation_mode(rt) is not None:
                # the null agent's trial, where it ran with the MCP tools, is the mutants' scout
                null = next(((mode, retried) for (_, mode, agent), _, retried in outcomes if agent == "null"), None)
                scout = None
                if null and null[0] in ("mcp", "hybrid"):
                    scout = RunDir(out).trial(rt.app.id, rt.key, f"{null[0]}-null", 0).path
                    scout = scout.with_name(scout.name + "-retry") if null[1] else scout
                record.mutation = await run_mutation(rt, out, backend, gate, scout_dir=scout,
                                                     on_trial=progress.started, on_done=progress.finished,
                                                     on_mutants=progress.grow)
            if proof_marks(rt, versions[rt.app.id]) != marks[rt.key]:
                failed += 1
                progress.print(f"{rt.key}: not recorded: its content or the code that decides its verdicts changed "
                               "while it was verified; verify it again")
                return
            save_record(rt.app.id, rt.key, record)
            why = stale(rt, load_records(rt.app.id), versions[rt.app.id], in_container=backend != "local")
            failed += why is not None
            if why:
                progress.print(f"{rt.key}: not proven: {why}")

        await gather_all(*(task_proof(rt) for rt in chosen))
    console.print(f"{len(chosen) - failed} of {len(chosen)} task(s) proven; trials in {out}")
    return failed


@app.command("mutate")
def tasks_mutate(app_id: list[str] = typer.Option([], "--app", help="an app's tasks (repeatable)"),
                 task: list[str] = typer.Option([], "--task", "-t", help="one task (repeatable)"),
                 parallel: int = typer.Option(1, min=1, help="trials side by side"),
                 listing: bool = typer.Option(False, "--list", help="only derive and list each task's mutants (one "
                                                                    "scout trial per task)")):
    """Derive near misses from each task's MCP oracle (mcpworld.mutants) and run them: each must fail, or be
    listed in the task as `equivalent`. The outcome goes into the task's proof record when the record is for
    its current content; a summary (mutation.json) into the run folder."""
    from mcpworld.install import app_version
    from mcpworld.mutation import mutation_mode

    _, tasks = load()
    chosen = [rt for rt in select(tasks, task, app_id) if rt.task.status == "ready" and mutation_mode(rt)]
    if not chosen:
        console.print("no ready task with an MCP oracle chosen")
        return
    keep_heap()
    versions = {rt.app.id: app_version(rt.app) for rt in chosen}
    summary = asyncio.run(_mutate(chosen, versions, parallel, listing))
    from mcpworld.cli.mutation_report import print_summary
    print_summary(summary, console)
    raise typer.Exit(0 if listing or all(t["complete"] for t in summary["tasks"].values()) else 1)


async def _mutate(chosen: list, versions: dict, parallel: int, listing: bool) -> dict:
    from mcpworld.cli.progress import TrialProgress
    from mcpworld.mutation import mutants_from, run_mutation
    from mcpworld.verify import content_hash, load_records, save_record

    out = paths.new_run_dir("mutate")
    gate = asyncio.Semaphore(parallel)
    summary: dict = {"run": str(out), "tasks": {}}
    with TrialProgress(len(chosen), err) as progress:
        async def one(rt):
            if listing:
                from mcpworld.agents import make_agent
                from mcpworld.mutation import mutation_mode
                from mcpworld.rundir import RunDir
                from mcpworld.trial import TrialOptions, run_trial
                async with gate:
                    progress.started(f"{rt.key} scout")
                    folder = RunDir(out).trial(rt.app.id, rt.key, "scout", 0).path
                    result = await run_trial(rt, make_agent("null"), TrialOptions(mode=mutation_mode(rt)), folder)
                    progress.finished(result, f"{rt.key} scout", "scout")
                found = mutants_from(rt, folder)
                summary["tasks"][rt.key] = {"app": rt.app.id, "mutants": {m.id: m.what for m in found}, "complete": True}
                return
            record = await run_mutation(rt, out, "local", gate, on_trial=progress.started, on_done=progress.finished,
                                        on_mutants=progress.grow)
            summary["tasks"][rt.key] = {"app": rt.app.id, "complete": record.complete, "score": record.score,
                                        **record.model_dump(include={"killed", "survived", "equivalent", "stillborn",
                                                                     "errors"}),
                                        "mutants": {k: m.model_dump(include={"family", "what", "outcome", "reason"})
                                                    for k, m in record.mutants.items()}}
            previous = load_records(rt.app.id).tasks.get(rt.key)
            if previous is not None and previous.hash == content_hash(rt, versions[rt.app.id]):
                previous.mutation = record
                save_record(rt.app.id, rt.key, previous)
                summary["tasks"][rt.key]["recorded"] = True
            else:
                progress.print(f"{rt.key}: not recorded (its proof record is not for its current content: "
                               "`mcpworld tasks verify` it)")
            (out / "mutation.json").write_text(json.dumps(summary, indent=1))

        await gather_all(*(one(rt) for rt in chosen))
    (out / "mutation.json").write_text(json.dumps(summary, indent=1))
    return summary


@app.command("scores")
def tasks_scores(app_id: list[str] = typer.Option([], "--app", help="an app's tasks (repeatable)")):
    """The mutation score per app and per operator family, from the proof records (`tasks verify`, `tasks
    mutate`); tasks without recorded mutants are counted apart."""
    from mcpworld.cli.mutation_report import print_summary
    from mcpworld.mutation import mutation_mode
    from mcpworld.verify import load_records

    _, tasks = load()
    chosen = [rt for rt in select(tasks, [], app_id) if rt.task.status == "ready"]
    summary: dict = {"run": "the proof records (tasks/<app>/verified.json)", "tasks": {}}
    missing = []
    for rt in chosen:
        rec = load_records(rt.app.id).tasks.get(rt.key)
        if mutation_mode(rt) is None:
            continue
        if rec is None or rec.mutation is None:
            missing.append(rt.key)
            continue
        m = rec.mutation
        summary["tasks"][rt.key] = {"app": rt.app.id, "complete": m.complete, "score": m.score,
                                    **m.model_dump(include={"killed", "survived", "equivalent", "stillborn", "errors"}),
                                    "mutants": {k: v.model_dump(include={"family", "what", "outcome"})
                                                for k, v in m.mutants.items()}}
    print_summary(summary, console)
    if missing:
        console.print(f"{len(missing)} task(s) with an MCP oracle have no recorded mutants: {', '.join(missing)}",
                      highlight=False, soft_wrap=True)


@app.command("rejudge")
def tasks_rejudge(runs: list[Path] = typer.Argument(..., help="run folders (of verify, mutate, run)"),
                  task: list[str] = typer.Option([], "--task", "-t", help="only this task (repeatable)"),
                  app_id: list[str] = typer.Option([], "--app", help="only this app's tasks (repeatable)"),
                  changes: bool = typer.Option(False, "--changes", help="print what each trial changed and how "
                                                                        "each change was matched")):
    """Judge recorded trials again under the tasks as they are now (their events and state reads), to try a
    rewritten check against every oracle, null agent, near miss and mutant already run. Lists the trials whose
    verdict is now wrong (a must-fail that passes, a must-pass that fails); exit 1 if any. Proves nothing by
    itself: after a change to an app's state query or hooks, run the trials again."""
    from mcpworld.rejudge import rejudge

    _, tasks = load()
    only = {rt.key for rt in select(tasks, task, app_id)} if task or app_id else None
    judged = [j for run in runs for j in rejudge(run, tasks, only)]
    wrong = [j for j in judged if j.wrong]
    for j in judged if changes else wrong:
        mark = "[red]WRONG[/red]" if j.wrong else "ok"
        v = j.verdict
        console.print(f"{mark} {j.task} {j.kind}{':' + j.solution if j.solution else ''}: now "
                      f"{'pass' if v.success else 'fail'} (was {'pass' if j.recorded else 'fail'})"
                      f"{'' if v.success else ' - ' + v.reason}", highlight=False, soft_wrap=True)
        if changes:
            for line in v.collateral:
                console.print(f"    collateral {line}", highlight=False, soft_wrap=True)
            for line in v.tolerated:
                console.print(f"    tolerated {line}", highlight=False, soft_wrap=True)
    tasks_seen = {j.task for j in judged}
    console.print(f"{len(judged)} trial(s) of {len(tasks_seen)} task(s) judged again: {len(wrong)} now wrong "
                  f"({sum(1 for j in wrong if not j.must_pass)} must-fail passing, "
                  f"{sum(1 for j in wrong if j.must_pass)} must-pass failing)", highlight=False)
    raise typer.Exit(1 if wrong else 0)


@app.command("costs")
def tasks_costs(count: list[int] = typer.Option([200], "--at", help="project CI's rotation to this many tasks")):
    """The recorded per-trial costs (median seconds per phase) and what CI's re-proof takes at more tasks."""
    from mcpworld.verify import ci_plan, costs, oldest_first, plan_seconds, rotation, runnable

    _, tasks = load()
    from mcpworld.report.text import compact_table

    table = compact_table("Median seconds per trial, from the records (the oracle per mode, the null agent)",
                          "trial", "n", "total", "open", "reset", "ready", "tools", "agent", "query", "down")
    rows = costs(tasks)
    for name, c in rows.items():
        table.add_row(name.removeprefix("oracle "), str(c["trials"]), *(f"{c.get(k, 0):.1f}" for k in ("total", "open", "reset", "ready",
                                                                              "gateway", "agent", "query", "teardown")))
    console.print(table)
    ready, slices, plan = runnable(tasks), rotation(tasks), ci_plan(tasks)
    trials = [t for part in slices for t in part]
    whole = plan_seconds(tasks, trials)
    oldest = oldest_first(ready, trials)
    console.print(f"CI re-proves {len(plan)} trials this commit ({plan_seconds(tasks, plan) / 60:.1f} min one at a "
                  f"time): one of {len(slices)} slices of the {len(trials)} proof trials of {len(ready)} ready tasks "
                  f"({whole / 60:.0f} min); the {len(oldest)} trials of the {len({k for k, _, _ in oldest})} tasks "
                  f"proven longest ago under an older verdict path ({', '.join(dict.fromkeys(k for k, _, _ in oldest))}); "
                  f"and what the newest record change re-proved", highlight=False)
    for n in count:
        console.print(f"at {n} tasks: every trial re-proven once in about {len(slices) * n / max(1, len(ready)):.0f} "
                      f"commits", highlight=False)


@app.command("record-windows")
def tasks_record_windows(task_ids: list[str] = typer.Argument(..., help="a task id, e.g. <app>/<id>"),
                         write: bool = typer.Option(False, "--write", help="store them in the task files")):
    """Run GUI oracles once and note which window has the focus after each step.

    With --write, each step's `window` is set, and the oracle will wait for that window from then on."""
    from mcpworld.oracle_windows import record, write as write_windows

    _, tasks = load()
    out = paths.new_run_dir("record-windows")
    failed = 0
    for rt in select(tasks, task_ids, []):
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
