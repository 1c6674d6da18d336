"""Reset: snapshot restore (rsync time and bytes) and app launch to ready (window mapped, probe or hooks
connected, still screen), for each installed app, against the app's bare cold start: the same restored
folder, the same launch command, no probe and no hooks, until it has drawn itself (the last screen
change before a second of stillness, on a screen that is not blank: Blender on software GL shows its
window as one grey fill for seconds before its first frame, and that stillness is not the drawn screen). When its main window maps (and, for an app whose readiness
includes a port of its own, such as an API's websocket, that port listens) is reported too: a window can
map well before it is drawn (a web view inside it may paint a second later).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import shutil
import tempfile
import time
from pathlib import Path

from gateway.modes import Mode
from gateway.net import free_port
from mcpworld import paths
from mcpworld.agents.base import Agent, AgentContext
from mcpworld.bench.stats import Figure, stat
from mcpworld.config.load import ResolvedTask
from mcpworld.envs.local import LocalEnvironment
from mcpworld.envs.x11 import STILL_SHARE
from mcpworld.launch import hand_over, launch, restore
from mcpworld.results import RAN
from mcpworld.trial import TrialOptions, run_trial
from mcpworld.values import RunValues


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


BLANK_SHARE = 0.9  # one colour over this share of the screen: a window mapped but not drawn (drawn ones: 0.1-0.6)


def _blank(raw: bytes) -> bool:
    pixels = len(raw) // 4
    step = 16  # a sample of the pixels is enough to tell a fill from a drawn screen
    raw = bytes(raw)
    tally: dict[bytes, int] = {}
    for i in range(0, pixels * 4, 4 * step):
        tally[raw[i:i + 3]] = tally.get(raw[i:i + 3], 0) + 1
    return max(tally.values(), default=0) > BLANK_SHARE * (pixels // step)


async def _last_change(screen, started: float, until_still: float, timeout: float) -> float:
    """Seconds from `started` to the last screen change before the screen stayed unchanged for
    `until_still` seconds, not blank: when the app finished drawing itself."""
    last_digest, last_change, blank = None, started, True
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        raw = screen.grab_raw().raw
        d = hashlib.blake2b(raw, digest_size=16).digest()
        now = time.perf_counter()
        if d != last_digest:
            last_digest, last_change, blank = d, now, _blank(raw)
        elif now - last_change >= until_still and not blank:
            break
        await asyncio.sleep(0.01)
    return last_change - started


def _longest_pause(watch, since: float, until: float) -> float:
    """The longest time between two drawings that changed pixels (over STILL_SHARE of the screen) from
    `since` to `until` (monotonic): a still-screen wait shorter than this would have ended mid start-up."""
    times = [since] + [t for t, box, changed in watch.draws if since <= t <= until and changed is not False
                       and box[2] * box[3] >= STILL_SHARE * watch.screen_area]
    return max((b - a for a, b in zip(times, times[1:])), default=0.0)


async def bare_start(rt: ResolvedTask) -> tuple[float, float, float | None]:
    """The app's own cold start: restored folder, no event sources (no probe files, no run config, no
    Frida). Three times: from launch until its main window mapped (and its own port up, where readiness
    has one) and until its screen was drawn (the last change before 1 s of stillness, not blank, once
    mapped); and the longest pause in its drawing in between (None without DAMAGE)."""
    from gateway.screen import Screen

    app = rt.app
    env = LocalEnvironment()
    await env.open()
    screen = None
    try:
        values = RunValues.draw(app, env, free_port)
        await restore(app, rt.task, env, values)  # the same files, ports and rendered config as a trial
        await hand_over(app, env, values)
        screen = Screen(env.display)
        watch = env.drawing()
        t, t_mono = time.perf_counter(), time.monotonic()
        with watch.waiting() if watch is not None else contextlib.nullcontext():
            await launch(app, env, values, {})
            await env.wait_window(app.ready.window_name, app.ready.timeout)
            mapped_mono = time.monotonic()
            if app.ready.port:  # the app's own readiness (its API up once it has loaded)
                await env.wait_port(values.port(app.ready.port), app.ready.timeout)
            mapped = time.perf_counter() - t
            drawn = await _last_change(screen, t, until_still=1.0, timeout=30.0)
        pause = _longest_pause(watch, mapped_mono, t_mono + drawn + 0.02) if watch is not None else None
        return mapped, max(mapped, drawn), pause
    finally:
        if screen:
            screen.close()
        await env.close()


LINGER_S = 2.0


class _Watcher(Agent):
    """A null agent that looks at the screen for LINGER_S once the trial is ready: what the app still
    draws then, readiness should have waited for (its still-screen period is too short)."""

    name = "bench-watcher"

    def __init__(self):
        self.after_ready: list[float] = []  # per trial: seconds from ready to its last drawing, 0.0 if none

    async def run(self, ctx: AgentContext) -> None:
        watch = ctx.env.drawing() if ctx.env is not None else None
        if watch is None:
            return
        t = time.monotonic()
        with watch.waiting():
            await asyncio.sleep(LINGER_S)
        last = watch.last_draw(t, STILL_SHARE)
        self.after_ready.append(0.0 if last is None else last - t)


async def measure(bench_tasks: dict[str, ResolvedTask], n: int, out: Path) -> list[Figure]:
    """For each app's [bench] task."""
    figs = []
    for app_id, rt in bench_tasks.items():
        key = rt.key
        restores = [await rsync_restore(paths.SNAPSHOTS_DIR / cd.from_) for cd in rt.task.context_data]
        rsync_s = [sum(s for s, _ in restores)]
        nbytes = sum(b for _, b in restores)
        for _ in range(n - 1):
            rsync_s.append(sum([(await rsync_restore(paths.SNAPSHOTS_DIR / cd.from_))[0] for cd in rt.task.context_data]))
        bare = [await bare_start(rt) for _ in range(n)]
        mapped_s, drawn_s = stat([m for m, _, _ in bare]), stat([d for _, d, _ in bare])
        pauses = [p for _, _, p in bare if p is not None]
        reset, ready, both, trials = [], [], [], []
        watcher = _Watcher()
        for k in range(n):
            mode = Mode.MCP if Mode.MCP in rt.task.modes else rt.task.modes[0]
            r = await run_trial(rt, watcher, TrialOptions(mode=mode), out / f"reset-{app_id}-{k}", k)
            if r.failure not in RAN:
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
                   target="within 1.1x the app's own cold start",
                   note=f"ready = {' -> '.join(phases)} ({rt.app.ready.settle:g} s without drawing, counted from "
                        f"the last drawing, once the window holds the input focus); the bare start is drawn at its last screen change before 1 s of "
                        f"stillness on a screen not blank; median launch to " + ", ".join(f"{k} {v.median:.2f} s" for k, v in phases.items())),
            Figure(part="reset", name=f"{rt.app.name}: launch to ready", unit="s", value=stat(ready),
                   baseline_name="bare cold start, drawn", baseline=drawn_s),
            *([Figure(part="reset", name=f"{rt.app.name}: drawing after ready", unit="s", value=stat(watcher.after_ready),
                      target="0 (readiness waited for the last drawing)",
                      note=f"the last drawing over {STILL_SHARE:.0%} of the screen in the {LINGER_S:g} s after the "
                           f"trial was ready, 0 if none; readiness waits for {rt.app.ready.settle:g} s without one")]
              if watcher.after_ready else []),
            *([Figure(part="reset", name=f"{rt.app.name}: longest pause in drawing while it starts", unit="s",
                      value=stat(pauses),
                      note=f"between drawings that changed over {STILL_SHARE:.0%} of the screen, from its window "
                           f"mapping to its drawn screen (bare start): the still screen readiness waits for is "
                           f"{rt.app.ready.settle:g} s")] if pauses else []),
            Figure(part="reset", name=f"{rt.app.name}: bare cold start, {mapped_name}", unit="s", value=mapped_s,
                   note="the app's main window is up, but it may not have drawn itself yet"),
            Figure(part="reset", name=f"{rt.app.name}: restore in a trial (snapshot, probe files, config)", unit="s",
                   value=stat(reset)),
            Figure(part="reset", name=f"{rt.app.name}: rsync of the snapshot", unit="s", value=stat(rsync_s),
                   note=f"{nbytes / 1e6:.1f} MB transferred (cold, into an empty folder)"),
        ]
    return figs
