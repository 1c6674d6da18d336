"""Benchmarks that report figures as ratios against a baseline measured in the same run.

`startup`: what a trial costs before the agent acts, on the local backend (the baseline) and in
containers: environment up, snapshot restore, app ready, teardown; plus the container images'
build time, cached and (with cold=True) from scratch.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from gateway.modes import Mode
from mcpworld.agents import make_agent
from mcpworld.config.load import ResolvedTask
from mcpworld.envs import DOCKER, LOCAL
from mcpworld.results import RAN
from mcpworld.trial import TrialOptions, run_trial

PHASES = ("open_s", "reset_s", "app_ready_s", "teardown_s", "total_s")


@dataclass
class StartupFigures:
    backend: str
    trials: int
    phases: dict[str, float] = field(default_factory=dict)  # median seconds per phase
    image_cached_s: float | None = None
    image_cold_s: float | None = None
    failures: list[str] = field(default_factory=list)


async def _trials(rt: ResolvedTask, backend: str, n: int) -> StartupFigures:
    figures = StartupFigures(backend, n)
    per_phase: dict[str, list[float]] = {p: [] for p in PHASES}
    with tempfile.TemporaryDirectory(prefix="mcpworld-bench-") as tmp:
        for k in range(n):
            # the null agent: the trial is start-up, state query and teardown only
            mode = Mode.MCP if Mode.MCP in rt.task.modes else rt.task.modes[0]
            result = await run_trial(rt, make_agent("null"), TrialOptions(mode=mode, backend=backend),
                                     Path(tmp) / f"{backend}-{k}", k)
            if result.failure not in RAN:
                figures.failures.append(f"{result.failure}: {result.failure_detail}")
                continue
            for p in PHASES:
                per_phase[p].append(getattr(result.timings, p))
    figures.phases = {p: statistics.median(v) for p, v in per_phase.items() if v}
    return figures


def _image_builds(rt: ResolvedTask, figures: StartupFigures, cold: bool, log) -> None:
    from mcpworld import images

    client = images.docker_client()
    t = time.perf_counter()
    images.build_desktop(client, "xfce", log=log)
    images.build_app(client, "xfce", rt.app, log=log)
    figures.image_cached_s = time.perf_counter() - t
    if cold:
        t = time.perf_counter()
        images.build_desktop(client, "xfce", log=log, force=True, nocache=True)
        images.build_app(client, "xfce", rt.app, log=log, force=True, nocache=True)
        figures.image_cold_s = time.perf_counter() - t


def startup(rt: ResolvedTask, trials: int = 3, cold: bool = False, log=print) -> list[StartupFigures]:
    """Local first (the baseline), then docker, each over `trials` null-agent trials of one task."""
    local = asyncio.run(_trials(rt, LOCAL, trials))
    docker = StartupFigures(DOCKER, trials)
    _image_builds(rt, docker, cold, log)
    measured = asyncio.run(_trials(rt, DOCKER, trials))
    docker.phases, docker.failures = measured.phases, measured.failures
    return [local, docker]
