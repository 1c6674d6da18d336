"""A window that takes the focus before it paints (Blender's file view on software GL, under load): the
oracle's settle waits for paint, where a still screen alone would let a click land on an empty window."""

import sys

from gateway.screen import Screen
from mcpworld.envs import LOCAL, make_environment
from gateway.xwindows import XWindows

# Maps one flat colour at once, takes the focus, and draws a bar across itself argv[2] seconds later.
LATE_PAINTER = r"""
import sys, time
from Xlib import X, display
d = display.Display()
s = d.screen()
w = s.root.create_window(100, 100, 400, 300, 0, s.root_depth, X.InputOutput, X.CopyFromParent,
                         background_pixel=s.white_pixel, event_mask=X.ExposureMask)
w.set_wm_name(sys.argv[1])
w.map()
d.sync()
time.sleep(float(sys.argv[2]))
w.fill_rectangle(w.create_gc(foreground=s.black_pixel), 0, 100, 400, 50)
d.flush()
time.sleep(300)
"""


def _flat(env, screen, name: str) -> bool:
    with XWindows(env.display) as xw:
        win = next(w for w in xw.visible_windows() if xw.name(w) == name)
        return screen.is_flat(xw.geometry(win))


async def test_settle_waits_for_a_late_first_paint():
    env = make_environment(LOCAL)
    await env.open()
    screen = Screen(env.display)
    try:
        # The control draws long after any settle returns, so a loaded machine cannot paint it in time.
        first = await env.spawn([sys.executable, "-c", LATE_PAINTER, "late-1", "120"], log_name="late-1")
        await env.wait_window("^late-1$", 20)
        await env.settle("^late-1$", quiet=0.3, timeout=5.0)
        assert _flat(env, screen, "late-1"), "without a paint wait, a still screen passes while the window is blank"
        await env.kill_group(first)

        await env.spawn([sys.executable, "-c", LATE_PAINTER, "late-2", "2"], log_name="late-2")
        await env.wait_window("^late-2$", 20)
        await env.settle("^late-2$", quiet=0.3, timeout=5.0, paint_timeout=20.0)
        assert not _flat(env, screen, "late-2"), "the paint wait returned before the window drew"
    finally:
        screen.close()
        await env.close()
