"""File milestones: real inotify events become `fs` events in the evaluator's log."""

import asyncio

from evaluator.fswatch import FileWatcher, Watch
from evaluator.server import Evaluator


async def test_file_milestones_reach_the_log(tmp_path):
    e = Evaluator("r", "app", tmp_path / "events.jsonl")
    await e.start()
    watched = tmp_path / "home"
    watched.mkdir()
    loop = asyncio.get_running_loop()
    w = FileWatcher([Watch("exported", str(watched / "out" / "*.csv"), ("close_write",)),
                     Watch("removed", str(watched / "old.txt"), ("delete",))],
                    lambda name, payload: loop.call_soon_threadsafe(e.record_internal, "fs", name, payload))
    (watched / "old.txt").write_text("x")
    w.start()
    try:
        (watched / "out").mkdir()           # a folder that did not exist when watching began
        await asyncio.sleep(0.2)
        (watched / "out" / "a.csv").write_text("1,2")
        (watched / "out" / "a.txt").write_text("no")
        (watched / "old.txt").unlink()
        for _ in range(100):
            if {"exported", "removed"} <= {x.name for x in e.log.events}:
                break
            await asyncio.sleep(0.02)
    finally:
        w.stop()
        await e.stop()
    fs = [x for x in e.log.events if x.source == "fs"]
    assert [(x.name, x.payload["path"].rsplit("/", 1)[1]) for x in fs] == [("exported", "a.csv"), ("removed", "old.txt")]
    assert fs[0].payload["kind"] == "close_write" and fs[0].payload["size"] == 3
