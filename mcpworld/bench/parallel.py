"""Parallel environments: trials per hour with 1, 2, 4, 6 environments side by side (the MCP oracle over
the light tasks the first app with [bench] parallel_tasks names), and the peak memory per environment;
where throughput stops growing. Baseline: one environment at a time.

Memory (`--part memory`): each benchmarked app's peak memory in one environment (its bench task's MCP
oracle), against the bare desktop's; kept with the app (apps/<app>/measured.json) for `--parallel auto`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

import psutil

from gateway.modes import Mode
from mcpworld.bench.stats import Figure, stat
from mcpworld.config.load import ResolvedTask
from mcpworld.runner import run_all
from mcpworld.trial import TrialOptions

SAMPLE = 0.25  # seconds between memory samples


def _children_rss() -> int:
    """Bytes resident in every process under this one (the trials' apps, displays and servers)."""
    total = 0
    for p in psutil.Process(os.getpid()).children(recursive=True):
        try:
            total += p.memory_info().rss
        except psutil.Error:
            continue
    return total


def _used_since_start():
    """The machine's memory in use above what it was when asked (trials on Ray nodes are not our children)."""
    start = psutil.virtual_memory().used
    return lambda: psutil.virtual_memory().used - start


INTERPRETERS = ("python", "node", "electron")  # processes named by the script they run


def _kind(p: psutil.Process) -> str:
    """What a process is, for the CPU table: its name, or for an interpreter the script or module it runs."""
    name = p.name()
    if not name.lower().startswith(INTERPRETERS):
        return name
    args = [a for a in p.cmdline()[1:] if not a.startswith("-")]
    return f"{name} {Path(args[0]).name}" if args else name


class CpuByKind:
    """CPU seconds (user + system) each kind of process under this one spent while the block ran, the runner
    itself included; sampled, so a process's last SAMPLE seconds before it exits are not counted."""

    def __init__(self) -> None:
        self.last: dict[tuple[int, float], tuple[str, float]] = {}  # (pid, start) -> (kind, CPU so far)
        self.me = psutil.Process(os.getpid())
        self.start = sum(self.me.cpu_times()[:2])
        self.machine = psutil.cpu_times()
        self.sampling = 0.0  # the runner's CPU spent here, not the runner's own share

    def read(self) -> int:
        t = time.thread_time()
        for p in self.me.children(recursive=True):
            try:
                with p.oneshot():
                    key = (p.pid, p.create_time())
                    kind = self.last[key][0] if key in self.last else _kind(p)
                    self.last[key] = (kind, sum(p.cpu_times()[:2]))
            except psutil.Error:
                continue
        self.sampling += time.thread_time() - t
        return 0

    def totals(self) -> tuple[dict[str, float], float]:
        """CPU seconds by kind, largest first; and the machine's busy CPU seconds over the same time."""
        out = {"the runner (mcpworld)": sum(self.me.cpu_times()[:2]) - self.start - self.sampling}
        for kind, cpu in self.last.values():
            out[kind] = out.get(kind, 0.0) + cpu
        now = psutil.cpu_times()
        busy = sum(now) - now.idle - now.iowait - (sum(self.machine) - self.machine.idle - self.machine.iowait)
        return dict(sorted(out.items(), key=lambda kv: -kv[1])), busy


def cpu_note(cpu: dict[str, float], busy: float, trials: int, wall: float, top: int = 6) -> str:
    """CPU per trial by kind, and how busy the cores were."""
    cores = os.cpu_count() or 1
    ours = sum(cpu.values())
    parts = ", ".join(f"{k} {v / trials:.2f}" for k, v in list(cpu.items())[:top])
    return (f"CPU s per trial: {ours / trials:.2f} in our processes ({parts}), {(busy - ours) / trials:.2f} elsewhere; "
            f"the cores {busy / (wall * cores):.0%} busy")


@contextlib.asynccontextmanager
async def _peak(read):
    """The highest value read() gave while the block ran, sampled every SAMPLE seconds: peak[0]."""
    stop, peak = asyncio.Event(), [0]

    async def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], read())
            try:
                await asyncio.wait_for(stop.wait(), SAMPLE)
            except asyncio.TimeoutError:
                pass

    sampler = asyncio.create_task(sample())
    try:
        yield peak
    finally:
        stop.set()
        await sampler


async def one_level(tasks: list[ResolvedTask], width: int, per_env: int, out: Path,
                    executor=None) -> tuple[float, float, int, float, str]:
    """(trials per hour, peak MB per environment, failures, peak GB the machine used beyond its start, CPU
    per trial by process kind) for `width` environments side by side, here or (with an executor, no CPU
    note) on a Ray cluster."""
    total = width * per_env
    trials = -(-total // len(tasks))
    cpu = CpuByKind()
    async with _peak(_children_rss) as peak, _peak(_used_since_start()) as used, _peak(cpu.read):  # cpu: sampled only
        t = time.perf_counter()
        summary = await run_all(tasks, [Mode.MCP], "oracle", out, trials=trials, base_opts=TrialOptions(),
                                parallel=width, executor=executor)
        wall = time.perf_counter() - t
    n = summary.trials
    note = cpu_note(*cpu.totals(), n, wall) if executor is None else ""
    return n / wall * 3600, peak[0] / 1e6 / width, n - summary.overall.successes, max(used[0], 1) / 2**30, note


async def measure(all_tasks: dict[str, ResolvedTask], bench_tasks: dict[str, ResolvedTask], widths: list[int],
                  per_env: int, out: Path, ray_address: str | None = None) -> list[Figure]:
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
    for w, (rate, mb, failed, gb, cpu) in rows.items():
        figs.append(Figure(part="parallel", name=f"{w} {app.name} environment(s) side by side", unit="trials/h",
                           value=stat([rate]), baseline_name=f"{widths[0]} environment", baseline=stat([base_rate]),
                           # at best each core (or each environment, where there are fewer) runs trials as fast as one did alone
                           target=f"at least {0.95 * min(w, os.cpu_count() or 1):.1f}x" if w > widths[0] else "",
                           note=f"peak {mb:.0f} MB per environment; {rate / gb:.0f} trials/h per GB used; "
                                f"{failed} failed trial(s){'; the most throughput' if w == best else ''}; {cpu}"))
    if ray_address:
        figs += await _on_ray(ray_address, tasks, widths, per_env, out, rows, app.name)
    return figs


async def _on_ray(address: str, tasks, widths: list[int], per_env: int, out: Path, local: dict, name: str) -> list[Figure]:
    """The same levels as Ray tasks on the cluster at `address`, against --parallel here; Ray's overhead per trial."""
    from mcpworld.ray_executor import RayExecutor

    executor = RayExecutor(address)
    executor.check(tasks, "local")
    figs = []
    for w in widths:
        rate, _, failed, gb, _ = await one_level(tasks, w, per_env, out / f"ray-{w}", executor=executor)
        figs.append(Figure(part="parallel", name=f"{w} {name} trial(s) at once on Ray", unit="trials/h",
                           value=stat([rate]), baseline_name=f"--parallel {w} here", baseline=stat([local[w][0]]),
                           note=f"{rate / gb:.0f} trials/h per GB used; {failed} failed trial(s)"))
    durations = [r.timings.total_s for r in _results(out, "ray-")]
    figs.append(Figure(part="parallel", name="Ray's overhead per trial (submit to start, result back)", unit="s",
                       value=stat(executor.overheads), baseline_name="the trial on its node",
                       baseline=stat(durations or [1.0])))
    return figs


def _results(out: Path, prefix: str):
    from mcpworld.rundir import RunDir

    return [r for d in sorted(out.glob(f"{prefix}*")) for r in RunDir(d).results()]


async def _bare_desktop_mb(seconds: float = 3.0) -> float:
    """The peak memory of an environment with no app: its X server, window manager and session bus."""
    from mcpworld.envs import LOCAL, make_environment

    env = make_environment(LOCAL)
    async with _peak(_children_rss) as peak:
        await env.open()
        try:
            await asyncio.sleep(seconds)
        finally:
            await env.close()
    return peak[0] / 2**20


async def memory(bench_tasks: dict[str, ResolvedTask], out: Path) -> list[Figure]:
    """Each app's peak MB in one environment (its bench task's MCP oracle), written to apps/<app>/measured.json."""
    from mcpworld.admission import write_measured
    from mcpworld.bench.run import machine

    bare = await _bare_desktop_mb()
    figs = []
    for app_id, rt in sorted(bench_tasks.items()):
        mode = Mode.MCP if Mode.MCP in rt.task.modes else rt.task.modes[0]
        async with _peak(_children_rss) as peak:
            await run_all([rt], [mode], "oracle", out / f"memory-{app_id}", base_opts=TrialOptions())
        mb = peak[0] / 2**20
        write_measured(rt.app.folder, mb, machine())
        figs.append(Figure(part="memory", name=f"{rt.app.name}: peak memory of one environment", unit="MB",
                           value=stat([mb]), baseline_name="the bare desktop (X server, window manager, bus)",
                           baseline=stat([bare]), note=f"written to apps/{app_id}/measured.json for --parallel auto"))
    return figs
