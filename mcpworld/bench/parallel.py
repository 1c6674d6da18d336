"""Parallel environments: trials per hour with 1, 2, 4, 6 environments side by side (the MCP oracle over
the light tasks the first app with [bench] parallel_tasks names), and the peak memory per environment;
where throughput stops growing.
Baseline: one environment at a time.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import psutil

from gateway.modes import Mode
from mcpworld.bench.stats import Figure, stat
from mcpworld.config.load import ResolvedTask
from mcpworld.runner import run_all
from mcpworld.trial import TrialOptions


async def _peak_rss(stop: asyncio.Event, peak: list[int]) -> None:
    me = psutil.Process(os.getpid())
    while not stop.is_set():
        total = 0
        for p in me.children(recursive=True):
            try:
                total += p.memory_info().rss
            except psutil.Error:
                continue
        peak[0] = max(peak[0], total)
        try:
            await asyncio.wait_for(stop.wait(), 0.25)
        except asyncio.TimeoutError:
            pass


async def one_level(tasks: list[ResolvedTask], width: int, per_env: int, out: Path) -> tuple[float, float, int]:
    """(trials per hour, peak MB per environment, failures) for `width` environments side by side."""
    total = width * per_env
    trials = -(-total // len(tasks))
    stop, peak = asyncio.Event(), [0]
    sampler = asyncio.create_task(_peak_rss(stop, peak))
    t = time.perf_counter()
    summary = await run_all(tasks, [Mode.MCP], "oracle", out, trials=trials, base_opts=TrialOptions(), parallel=width)
    wall = time.perf_counter() - t
    stop.set()
    await sampler
    n = summary.trials
    return n / wall * 3600, peak[0] / 1e6 / width, n - summary.overall.successes


async def measure(all_tasks: dict[str, ResolvedTask], bench_tasks: dict[str, ResolvedTask], widths: list[int],
                  per_env: int, out: Path) -> list[Figure]:
    app = next((rt.app for rt in bench_tasks.values() if rt.app.bench.parallel_tasks), None)
    if app is None:
        raise RuntimeError("no installed app names [bench] parallel_tasks")
    tasks = [all_tasks[f"{app.id}/{t}"] for t in app.bench.parallel_tasks]
    rows = {}
    for w in widths:
        rows[w] = await one_level(tasks, w, per_env, out / f"parallel-{w}")
    base_rate = rows[widths[0]][0]
    figs = []
    best = max(rows, key=lambda w: rows[w][0])
    for w, (rate, mb, failed) in rows.items():
        figs.append(Figure(part="parallel", name=f"{w} {app.name} environment(s) side by side", unit="trials/h",
                           value=stat([rate]), baseline_name=f"{widths[0]} environment", baseline=stat([base_rate]),
                           note=f"peak {mb:.0f} MB per environment; {failed} failed trial(s)"
                                f"{'; the most throughput' if w == best else ''}"))
    return figs
