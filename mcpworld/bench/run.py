"""Run the benchmark parts and write their figures (JSON) with the machine they came from."""

from __future__ import annotations

import asyncio
import os
import platform
import tempfile
import time
from pathlib import Path

import psutil
from pydantic import BaseModel

from mcpworld.bench.stats import Figure

PARTS = ("reset", "latency", "screenshot", "typing", "gateway", "parallel", "app_typing", "memory")
# asked for by name: app_typing types into each app twice over (minutes per app), memory writes apps/<app>/measured.json
DEFAULT_PARTS = PARTS[:-2]


class Sizes(BaseModel):
    repeats: int        # reset: trials per app
    events: int         # latency: events per source
    shots: int          # screenshot: captures
    texts: int          # typing: texts typed each way
    calls: int          # gateway: calls per path
    widths: list[int]   # parallel: environments side by side (and trials at once on Ray)
    per_env: int        # parallel: trials per environment
    app_chars: int = 2000  # app_typing: characters typed into each app, each way


FULL = Sizes(repeats=5, events=1000, shots=100, texts=300, calls=200, widths=[1, 2, 4, 6], per_env=3, app_chars=20000)
QUICK = Sizes(repeats=2, events=200, shots=20, texts=60, calls=30, widths=[1, 2], per_env=2, app_chars=2000)
SMOKE = Sizes(repeats=1, events=30, shots=5, texts=6, calls=5, widths=[1, 2], per_env=1, app_chars=200)  # the test: every figure, fast
SIZES = {"full": FULL, "quick": QUICK, "smoke": SMOKE}


class BenchResult(BaseModel):
    v: int = 1
    started: float
    seconds: float
    machine: dict
    sizes: Sizes
    figures: list[Figure]
    errors: dict[str, str]


def machine() -> dict:
    return {"host": platform.node(), "cpus": os.cpu_count(), "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
            "python": platform.python_version(), "kernel": platform.release(), "cpu": _cpu_model()}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def bench_tasks(tasks: dict, only: list[str] = ()) -> dict:
    """Each installed app's [bench] task: app id -> its resolved task (apps without a [bench] table are left out;
    with `only`, the apps named there, each of which must have one)."""
    from mcpworld.errors import ConfigError
    from mcpworld.install import is_installed

    apps = {rt.app.id: rt.app for rt in tasks.values()}
    out = {}
    for app_id, app in apps.items():
        if app.bench is None or not app.available or not is_installed(app):
            continue
        key = f"{app_id}/{app.bench.task}"
        if key not in tasks:
            raise ConfigError(app.folder / "app.toml", "bench.task", f"no task {key}")
        out[app_id] = tasks[key]
    if only:
        missing = sorted(set(only) - set(out))
        if missing:
            raise ValueError(f"--app: no installed app with a bench table in its app.toml: {', '.join(missing)} "
                             f"(benchmarked apps: {', '.join(sorted(out)) or 'none'})")
        out = {a: rt for a, rt in out.items() if a in only}
    return out


async def run(parts: list[str], sizes: Sizes, log=print, apps: list[str] = (), ray_address: str | None = None) -> BenchResult:
    from mcpworld.bench import app_typing, gateway, latency, parallel, reset, screen, typed_text
    from mcpworld.config.load import load_tasks

    tasks = load_tasks()
    chosen = bench_tasks(tasks, apps)
    started, t0 = time.time(), time.perf_counter()
    figures: list[Figure] = []
    errors: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="mcpworld-bench-") as tmp:
        out = Path(tmp)
        for part in parts:
            log(f"bench {part} ...")
            t = time.perf_counter()
            try:
                if part == "reset":
                    figures += await reset.measure(chosen, sizes.repeats, out)
                elif part == "latency":
                    figures += await latency.measure(chosen, sizes.events, out, errors)
                elif part == "screenshot":
                    figures += await screen.measure(sizes.shots)
                elif part == "typing":
                    figures += await typed_text.measure(sizes.texts)
                elif part == "app_typing":
                    figures += await app_typing.measure(chosen, sizes.app_chars, out)
                elif part == "gateway":
                    figures += await gateway.measure(chosen, sizes.calls, out)
                elif part == "parallel":
                    figures += await parallel.measure(tasks, chosen, sizes.widths, sizes.per_env, out, ray_address)
                elif part == "memory":
                    figures += await parallel.memory(chosen, out)
                else:
                    raise ValueError(f"unknown part '{part}' (known: {', '.join(PARTS)})")
            except Exception as e:  # one part failing must not lose the others' figures
                errors[part] = f"{type(e).__name__}: {e}"
            log(f"bench {part}: {time.perf_counter() - t:.0f}s{' (failed: ' + errors[part] + ')' if part in errors else ''}")
    return BenchResult(started=started, seconds=time.perf_counter() - t0, machine=machine(), sizes=sizes,
                       figures=figures, errors=errors)


def run_sync(parts: list[str], size: str, log=print, apps: list[str] = (), ray_address: str | None = None) -> BenchResult:
    return asyncio.run(run(parts, SIZES[size], log, apps, ray_address))
