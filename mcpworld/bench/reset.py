"""Reset: snapshot restore (rsync time and bytes) and app launch to ready (window mapped, probe or hooks
connected, still screen), for each installed app, against the app's bare cold start: the same restored
folder, the same launch command, no probe and no hooks, until it has drawn itself (the last screen
change before a second of stillness). When its main window maps (and, for an app whose readiness
includes a port of its own, such as OBS's websocket, that port listens) is reported too: a window can
map well before it is drawn (Anki's deck list is a web view that paints about a second later).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
import time
from pathlib import Path

from mcpworld import paths
from mcpworld.agents import make_agent
from mcpworld.bench.stats import Figure, stat
from mcpworld.config.load import ResolvedTask
from mcpworld.config.templating import expand
from mcpworld.envs.local import LocalEnvironment
from mcpworld.trial import Trial, TrialOptions


async def rsync_restore(source: Path) -> tuple[float, int]:
    """One cold restore of a snapshot into an empty folder: seconds and bytes transferred."""
    with tempfile.TemporaryDirectory(prefix="mcpworld-bench-rsync-") as tmp:
        t = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(shutil.which("rsync") or "rsync", "-a", "--delete", "--stats",
                                                    f"{source}/", f"{tmp}/dest", stdout=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate()
        seconds = time.perf_counter() - t
    m = re.search(rb"Total transferred file size: ([\d,.]+)", out)
    return seconds, int(m.group(1).replace(b",", b"").replace(b".", b"")) if m else 0


async def _last_change(screen, started: float, until_still: float, timeout: float) -> float:
    """Seconds from `started` to the last screen change before the screen stayed unchanged for
    `until_still` seconds: when the app finished drawing itself."""
    last_digest, last_change = None, started
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        d = screen._digest()
        now = time.perf_counter()
        if d != last_digest:
            last_digest, last_change = d, now
        elif now - last_change >= until_still:
            break
        await asyncio.sleep(0.01)
    return last_change - started


async def bare_start(rt: ResolvedTask) -> tuple[float, float]:
    """The app's own cold start: restored folder, no probe files, no probe config, no Frida.
    Two times from launch: its main window mapped (and its own port up, where readiness has one), and
    its screen drawn (the last change before 1 s of stillness, once mapped)."""
    from evaluator.server import Evaluator
    from gateway.screen import Screen

    env = LocalEnvironment()
    await env.open()
    screen = None
    with tempfile.TemporaryDirectory(prefix="mcpworld-bench-bare-") as tmp:
        evaluator = Evaluator("bench", rt.app.id, Path(tmp) / "events.jsonl")
        await evaluator.start()
        try:
            trial = Trial(rt, make_agent("null"), TrialOptions(mode="mcp"), Path(tmp) / "t")
            await trial._reset(env, evaluator)  # the same files, ports and rendered config as a trial
            for pf in rt.app.probe_files:
                shutil.rmtree(expand(pf.to, trial.values), ignore_errors=True)
            argv = [expand(a, trial.values) for a in rt.app.launch.command]
            launch_env = {k: expand(v, trial.values) for k, v in rt.app.launch.env.items()}
            screen = Screen(env.display)
            t = time.perf_counter()
            await env.spawn(argv, env=launch_env, log_name="app")
            await env.wait_window(rt.app.ready.window_name, rt.app.ready.timeout)
            if rt.app.ready.port:  # the app's own readiness (OBS: obs-websocket up once plugins and scenes loaded)
                await env.wait_port(int(trial.values[f"port_{rt.app.ready.port}"]), rt.app.ready.timeout)
            mapped = time.perf_counter() - t
            drawn = await _last_change(screen, t, until_still=1.0, timeout=30.0)
            return mapped, max(mapped, drawn)
        finally:
            if screen:
                screen.close()
            await evaluator.stop()
            await env.close()


async def measure(tasks: dict[str, ResolvedTask], n: int, out: Path, installed: set[str]) -> list[Figure]:
    figs = []
    for app_id, key in (("anki", "anki/161"), ("obs", "obs/78")):
        if app_id not in installed:
            continue
        rt = tasks[key]
        restores = [await rsync_restore(paths.SNAPSHOTS_DIR / cd.from_) for cd in rt.task.context_data]
        rsync_s = [sum(s for s, _ in restores)]
        nbytes = sum(b for _, b in restores)
        for _ in range(n - 1):
            rsync_s.append(sum([(await rsync_restore(paths.SNAPSHOTS_DIR / cd.from_))[0] for cd in rt.task.context_data]))
        bare = [await bare_start(rt) for _ in range(n)]
        mapped_s, drawn_s = stat([m for m, _ in bare]), stat([d for _, d in bare])
        reset, ready, both, trials = [], [], [], []
        for k in range(n):
            r = await Trial(rt, make_agent("null"), TrialOptions(mode="mcp"), out / f"reset-{app_id}-{k}", k).run()
            if r.failure not in (None, "evaluated_failed"):
                raise RuntimeError(f"{key}: {r.failure}: {r.failure_detail}")
            trials.append(r)
            reset.append(r.timings.reset_s)
            ready.append(r.timings.app_ready_s)
            both.append(r.timings.reset_s + r.timings.app_ready_s)
        mapped_name = "window mapped" + (", port up" if rt.app.ready.port else "")
        phases = {}
        for name in trials[0].timings.ready_phases:
            phases[name] = stat([r.timings.ready_phases[name] for r in trials])
        figs += [
            Figure(part="reset", name=f"{rt.app.name}: reset + launch to ready (a trial)", unit="s", value=stat(both),
                   baseline_name="the app's bare cold start to its drawn screen", baseline=drawn_s,
                   target="within 1.3x the app's own cold start",
                   note=f"ready = {' -> '.join(phases)} ({rt.app.ready.settle:g} s of still screen once the window "
                        f"holds the input focus); the bare start is drawn at its last screen change before 1 s of "
                        f"stillness; median launch to " + ", ".join(f"{k} {v.median:.2f} s" for k, v in phases.items())),
            Figure(part="reset", name=f"{rt.app.name}: launch to ready", unit="s", value=stat(ready),
                   baseline_name="bare cold start, drawn", baseline=drawn_s),
            Figure(part="reset", name=f"{rt.app.name}: bare cold start, {mapped_name}", unit="s", value=mapped_s,
                   note="the app's main window is up, but it may not have drawn itself yet"),
            Figure(part="reset", name=f"{rt.app.name}: restore in a trial (snapshot, probe files, config)", unit="s",
                   value=stat(reset)),
            Figure(part="reset", name=f"{rt.app.name}: rsync of the snapshot", unit="s", value=stat(rsync_s),
                   note=f"{nbytes / 1e6:.1f} MB transferred (cold, into an empty folder)"),
        ]
    return figs
