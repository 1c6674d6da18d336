"""Milestone latency: from the moment a hook or probe fires inside the app to the event being recorded
by the evaluator (its `received` time), for each app whose [bench.latency] names an MCP call and the event
it makes the app emit (an in-app probe, the Frida bridge), and for the inotify watcher. Baseline: a plain
websocket round trip on loopback.

Both clocks are the same host's wall clock (local backend), so received - ts is the latency.

In-app events are timed twice: with the calls 20 ms apart (an agent's calls are seconds apart) and back
to back, where the app, its MCP server, the bridge and the recorder compete for this machine's cores.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

from evaluator.events import Source
from gateway.modes import Mode
from mcpworld.bench.agents import CallLoopAgent
from mcpworld.bench.stats import Figure, Stat, stat
from mcpworld.config.load import ResolvedTask
from mcpworld.config.templating import expand_tree
from mcpworld.results import RAN
from mcpworld.trial import Trial, TrialOptions

TARGET = "p99 under 5 ms"


async def websocket_rtt(n: int) -> Stat:
    """Round trips of a small JSON message to an echo server on loopback (the floor for any event)."""
    from websockets.asyncio.client import connect
    from websockets.asyncio.server import serve

    async def echo(ws):
        async for msg in ws:
            await ws.send(msg)

    async with serve(echo, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}") as ws:
            samples = []
            msg = json.dumps({"name": "note_added", "payload": {"id": 1, "fields": {"Front": "x" * 40}}, "seq": 0})
            for _ in range(n):
                t = time.perf_counter()
                await ws.send(msg)
                await ws.recv()
                samples.append((time.perf_counter() - t) * 1000)
    return stat(samples)


def _latencies(events_file: Path, source: str, names: set[str]) -> list[float]:
    out = []
    for line in events_file.read_text().splitlines():
        e = json.loads(line)
        if e.get("source") == source and e.get("name") in names and e.get("received"):
            out.append((e["received"] - e["ts"]) * 1000)
    return out


SPACED = 0.02  # seconds between calls
PER_TRIAL = 100  # calls per trial: what a call adds (a document, an object) must not pile up past a task's size


async def _one_trial(rt: ResolvedTask, tool: str, args, n: int, out: Path, pause: float) -> None:
    agent = CallLoopAgent(tool, args, n, pause)
    result = await Trial(rt, agent, TrialOptions(mode=Mode.MCP, timeout=max(300.0, n * 1.0)), out).run()
    if result.failure not in RAN:
        raise RuntimeError(f"{rt.key}: {result.failure}: {result.failure_detail}")
    if agent.dropped:
        DROPPED.extend(f"{rt.key} {d}" for d in agent.dropped)


async def in_app(rt: ResolvedTask, tool: str, args, names: set[str], source: str, n: int, out: Path,
                 pause: float = SPACED) -> tuple[list[float], list[str]]:
    """n tool calls, each making the app fire one of `names`, in fresh trials of at most PER_TRIAL calls
    (a trial whose loop failed is made once more); their latencies, and what was retried."""
    samples, retried = [], []
    for start in range(0, n, PER_TRIAL):
        count, part = min(PER_TRIAL, n - start), out / f"from-{start}"
        shifted = lambda i, s=start: args(i + s)  # noqa: E731
        try:
            await _one_trial(rt, tool, shifted, count, part, pause)
        except RuntimeError as e:
            # a call the app dropped (Blender's bridge, rarely, under load) ends the loop: one fresh trial
            # more, said in the figure's note, as `tasks verify` gives a solution whose step failed
            retried.append(str(e)[:160])
            part = out / f"from-{start}-again"
            await _one_trial(rt, tool, shifted, count, part, pause)
        samples += _latencies(part / "events.jsonl", source, names)
    return samples, retried


DROPPED: list[str] = []  # calls an app dropped and the loop made again, for the figures' notes


async def inotify(n: int, out: Path) -> list[float]:
    """n files written and closed in a watched folder; latency from the close to the recorded event."""
    from evaluator.fswatch import FileWatcher, Watch
    from evaluator.server import Evaluator

    evaluator = Evaluator("bench", "bench", out / "events.jsonl")
    await evaluator.start()
    loop = asyncio.get_running_loop()
    with tempfile.TemporaryDirectory(prefix="mcpworld-bench-fs-") as tmp:
        watcher = FileWatcher([Watch("written", f"{tmp}/*.txt", ("close_write",))],
                              lambda name, payload: loop.call_soon_threadsafe(evaluator.record_internal, Source.FS, name, payload))
        watcher.start()
        closed: dict[str, float] = {}

        def write_all() -> None:  # another thread, as another process would be: the recorder's loop stays free
            for i in range(n):
                path = f"{tmp}/f{i}.txt"
                f = open(path, "w")
                f.write("x" * 64)
                closed[path] = time.time()  # just before the close that fires IN_CLOSE_WRITE
                f.close()
                time.sleep(0.002)

        try:
            await asyncio.to_thread(write_all)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and sum(e.name == "written" for e in evaluator.log.events) < n:
                await asyncio.sleep(0.02)
        finally:
            watcher.stop()
            await evaluator.stop()
    return [(e.received - closed[e.payload["path"]]) * 1000 for e in evaluator.log.events
            if e.name == "written" and e.payload.get("path") in closed]


async def measure(bench_tasks: dict[str, ResolvedTask], n: int, out: Path, errors: dict[str, str]) -> list[Figure]:
    """The figures; an app whose calls failed twice goes into `errors` (by figure), and the rest are still measured."""
    base = await websocket_rtt(max(n, 200))
    figs = []

    def fig(name: str, samples: list[float], note: str) -> Figure:
        return Figure(part="latency", name=name, unit="ms", value=stat(samples), baseline_name="websocket round trip",
                      baseline=base, target=TARGET, note=note)

    figs.append(fig("inotify watcher", await inotify(n, out / "inotify"),
                    "file closed -> fs event recorded"))
    for app_id, rt in bench_tasks.items():
        call = rt.app.bench.latency
        if call is None:
            continue
        label = f"{'Frida bridge' if call.source == Source.FRIDA else 'in-app probe'} ({rt.app.name})"
        note = (f"{call.tool} -> {call.event}, emitted in the app -> recorded; in fresh trials of at most "
                f"{PER_TRIAL} calls each")
        for pause, suffix, how in ((SPACED, "", f"calls {SPACED * 1000:.0f} ms apart"),
                                   (0.0, ", calls back to back", "the next call starts as the last returns")):
            DROPPED.clear()
            try:
                samples, retried = await in_app(rt, call.tool, lambda i, a=call.args: expand_tree(a, {"i": i}),
                                                {call.event}, call.source, n, out / f"{app_id}-{pause:g}", pause)
            except RuntimeError as e:  # a trial failed twice
                errors[f"latency: {label}{suffix}"] = str(e)[:400]
                continue
            retry = f"; {len(retried)} trial(s) made once more, the first after: {retried[0]}" if retried else ""
            if DROPPED:
                retry += f"; {len(DROPPED)} call(s) dropped without a reply and made again ({DROPPED[0]})"
            figs.append(fig(label + suffix, samples, f"{note}; {how}{retry}"))
    return figs
