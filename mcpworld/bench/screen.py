"""Screenshots at 1280x800: the computer tool's screenshot (a capture, encoded when read) against the raw
capture, and the time from an action to the screenshot that shows its effect (the tool waits until the X
server reports no more drawing; no fixed sleep) against the moment the effect first reaches the screen.

The effect comes from a small X client of our own: a window that changes colour on every key press.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time

from mcpworld.bench.stats import Figure, stat
from mcpworld.envs.local import LocalEnvironment

# A window that fills itself with the next colour on each key press (python-xlib, core protocol).
TOGGLER = r"""
import sys
from Xlib import X, display
d = display.Display()
s = d.screen()
colours = [s.default_colormap.alloc_color(*c).pixel for c in ((65535, 0, 0), (0, 0, 65535))]
w = s.root.create_window(0, 0, 1280, 800, 0, s.root_depth, X.InputOutput, X.CopyFromParent,
                         background_pixel=colours[0], event_mask=X.KeyPressMask | X.ExposureMask)
w.set_wm_name("mcpworld-bench-toggler")
w.map()
gc = w.create_gc(foreground=colours[0])
k = 0
while True:
    e = d.next_event()
    if e.type == X.KeyPress:
        k += 1
        w.change_attributes(background_pixel=colours[k % 2])
        w.clear_area(0, 0, 0, 0)
        d.flush()
"""


def _centre_pixel(screen) -> tuple[int, int, int]:
    shot = screen.grab_raw()
    i = (shot.height // 2 * shot.width + shot.width // 2) * 4
    b, g, r = shot.bgra[i], shot.bgra[i + 1], shot.bgra[i + 2]
    return r, g, b


@contextlib.contextmanager
def _no_damage():
    old = os.environ.get("MCPWORLD_NO_DAMAGE")
    os.environ["MCPWORLD_NO_DAMAGE"] = "1"
    try:
        yield
    finally:
        if old is None:
            del os.environ["MCPWORLD_NO_DAMAGE"]
        else:
            os.environ["MCPWORLD_NO_DAMAGE"] = old


async def measure(n: int) -> list[Figure]:
    from gateway.base import image_data
    from gateway.screen import Screen
    from gateway.tools.computer import SETTLE_QUIET, ComputerTool

    env = LocalEnvironment(1280, 800)
    await env.open()
    try:
        tool = ComputerTool(env.display)
        await tool.start()
        screen = Screen(env.display)
        raw, png, shot_tool, shot_read = [], [], [], []
        for _ in range(n):
            t = time.perf_counter()
            screen.grab_raw()
            raw.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            screen.png()
            png.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            r = await tool.call("computer", {"action": "screenshot"})
            shot_tool.append((time.perf_counter() - t) * 1000)
            assert r.images, r.summary()
            t = time.perf_counter()
            image_data(r.images[0])  # what an agent that reads the image pays on top
            shot_read.append((time.perf_counter() - t) * 1000 + shot_tool[-1])

        proc = await env.spawn([sys.executable, "-c", TOGGLER], log_name="toggler")
        await env.wait_window("^mcpworld-bench-toggler$", 10)
        await env.settle("^mcpworld-bench-toggler$", quiet=0.3, timeout=10)
        to_effect, tool_action, polled = [], [], []
        fallback = ComputerTool(env.display)
        with _no_damage():
            await fallback.start()
        for _ in range(max(5, n // 4)):
            for t_, times in ((tool, tool_action), (fallback, polled)):
                before = _centre_pixel(screen)
                t = time.perf_counter()
                r = await t_.call("computer", {"action": "key", "text": "space"})
                times.append((time.perf_counter() - t) * 1000)
                if _centre_pixel(screen) == before:
                    raise RuntimeError("the key press did not change the screen (the window did not get the key)")
                if t_ is tool and r.meta["settled"] != "quiet":
                    raise RuntimeError(f"the tool did not see the key's drawing (settled: {r.meta['settled']})")
            # the same action again, now only watching for the first changed frame
            before = _centre_pixel(screen)
            t = time.perf_counter()
            tool._xdo.send_keysequence_window(0, b"space", 0)
            while _centre_pixel(screen) == before:
                if time.perf_counter() - t > 5:
                    raise RuntimeError("no effect on screen within 5 s")
                await asyncio.sleep(0)
            to_effect.append((time.perf_counter() - t) * 1000)
            await asyncio.sleep(0.05)
        proc.kill()
        screen.close()
        await tool.close()
        await fallback.close()
    finally:
        await env.close()
    return [
        Figure(part="screenshot", name="screenshot through the computer tool (capture; PNG when read)", unit="ms",
               value=stat(shot_tool), baseline_name="raw capture (mss)", baseline=stat(raw),
               target="under 60 ms", note=f"read as PNG: median {stat(shot_read).median:.1f} ms; "
                                          f"PNG encode with the capture alone: median {stat(png).median:.1f} ms"),
        Figure(part="screenshot", name="action to a screenshot showing its effect", unit="ms",
               value=stat(tool_action), baseline_name="key press to first changed frame", baseline=stat(to_effect),
               target="under 50 ms",
               note=f"settled by DAMAGE events ({SETTLE_QUIET * 1000:.0f} ms without drawing); where a server has "
                    f"no DAMAGE, captures are compared: median {stat(polled).median:.0f} ms"),
    ]
