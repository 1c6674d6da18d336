"""DamageWatch on a real Xvfb: drawings are seen as they happen; animations and a blinking caret are not effects.
And the X connection it opens (gateway.xconn) keeps tables of its own."""

import asyncio
import time

import pytest
from Xlib import display as xdisplay
from Xlib import error
from Xlib.ext import randr
from Xlib.protocol import display as protocol_display

from gateway.damage import DamageWatch
from gateway.screen import Screen
from gateway.xconn import connect
from mcpworld.envs.local import LocalEnvironment


@pytest.fixture
async def bare():
    env = LocalEnvironment(window_manager=False)
    await env.open()
    yield env
    await env.close()


@pytest.fixture
async def watched(bare):
    """A painter on the display, and a watch that captures where it draws (to tell repaints from changes)."""
    painter = Painter(bare.display)
    screen = Screen(bare.display)
    watch = DamageWatch.open(bare.display, screen.region)
    yield painter, watch
    watch.close()
    screen.close()


class Painter:
    """A plain X client that draws filled boxes into its own window."""

    def __init__(self, display: str):
        from Xlib import display as xdisplay

        self.d = xdisplay.Display(display)
        s = self.d.screen()
        self.win = s.root.create_window(0, 0, 800, 600, 0, s.root_depth, background_pixel=s.white_pixel)
        self.win.map()
        self.black, self.white = self.win.create_gc(foreground=s.black_pixel), self.win.create_gc(foreground=s.white_pixel)
        self.d.sync()

    def box(self, x, y, w, h, gc=None):
        self.win.fill_rectangle(gc or self.black, x, y, w, h)
        self.d.sync()

    async def blink(self, box, period, count):
        for i in range(count):
            self.box(*box, self.black if i % 2 else self.white)
            await asyncio.sleep(period)

    async def repeat(self, box, period, count):
        for _ in range(count):
            self.box(*box)
            await asyncio.sleep(period)


async def test_a_drawing_is_seen_and_then_settles(bare):
    painter = Painter(bare.display)
    watch = DamageWatch.open(bare.display)
    try:
        assert await watch.settled(watch.mark(), first=0.1, quiet=0.05, timeout=2) in ("none", "quiet")
        t0 = watch.mark()
        assert await watch.settled(t0, first=0.1, quiet=0.05, timeout=2) == "none"
        assert time.monotonic() >= t0 + 0.1  # nothing drawn: it waited out `first`
        # a drawing ends the wait on its quiet period: "quiet" long before a no-drawing wait of 5 s could end
        t0 = watch.mark()
        painter.box(10, 10, 200, 100)
        assert await watch.settled(t0, first=5.0, quiet=0.05, timeout=10) == "quiet"
        assert watch.draws[-1][1] == (10, 10, 200, 100)
        assert time.monotonic() >= watch.last_draw(t0) + 0.05  # and no earlier than its quiet period
        # drawing that goes on past the quiet period keeps the wait going, up to the timeout
        t0 = watch.mark()
        go = asyncio.create_task(painter.repeat((300, 300, 50, 50), 0.02, 30))
        assert await watch.settled(t0, first=0.1, quiet=0.05, timeout=0.3) == "timeout"
        await go
    finally:
        watch.close()


async def test_repaints_without_change_and_a_caret_do_not_hold_a_wait(watched):
    painter, watch = watched
    preview = asyncio.create_task(painter.repeat((400, 100, 300, 200), 0.03, 80))  # a still scene at 30 Hz
    caret = asyncio.create_task(painter.blink((50, 50, 2, 16), 0.5, 6))  # a caret blinking at 1 Hz
    await asyncio.sleep(0.2)
    # the preview's first frame in a wait is new to the watch; from then on it is known to repeat
    await watch.settled(watch.mark(), first=0.1, quiet=0.05, timeout=1)
    t0 = watch.mark()
    # the repeats go on for seconds: had they held the wait it would have ended on its timeout
    assert await watch.settled(t0, first=0.1, quiet=0.05, timeout=1) in ("none", "quiet")
    t0 = watch.mark()
    painter.box(100, 400, 120, 40)  # an effect among them is still seen
    assert await watch.settled(t0, first=0.1, quiet=0.05, timeout=1) == "quiet"
    assert watch.last_draw(t0) is not None
    # a drawing under a share of the screen is ignored where asked (readiness: 2%)
    t0 = watch.mark()
    painter.box(100, 500, 30, 30)
    assert watch.last_draw(t0, min_share=0.02) is None
    await asyncio.gather(preview, caret)


async def test_the_same_region_drawn_with_new_pixels_counts(watched):
    painter, watch = watched
    for colour in (painter.black, painter.white, painter.black, painter.white):
        t0 = watch.mark()
        painter.box(200, 200, 100, 100, colour)
        assert await watch.settled(t0, first=0.1, quiet=0.05, timeout=1) == "quiet"


async def test_drawing_within_a_window_ignores_what_repaints_around_it(watched):
    """The typing pace's echo: a dialog over a live preview. The preview's repaints are reported clipped to
    what shows, so they never fall inside the dialog; what the dialog draws does."""
    painter, watch = watched
    s = painter.d.screen()
    dialog = s.root.create_window(200, 150, 300, 200, 0, s.root_depth, background_pixel=s.white_pixel,
                                  override_redirect=1)
    dialog.map()
    painter.d.sync()
    await watch.settled(watch.mark(), first=0.1, quiet=0.05, timeout=1)
    t0 = watch.mark()
    preview = asyncio.create_task(painter.repeat((0, 0, 800, 600), 0.03, 10))  # the whole window, under it
    assert not await watch.drawn(t0, timeout=0.5, within=(200, 150, 300, 200))
    assert await watch.drawn(t0, timeout=0.5)  # the preview was drawn, around the dialog
    await preview
    t0 = watch.mark()
    dialog.fill_rectangle(dialog.create_gc(foreground=s.black_pixel), 10, 10, 8, 14)  # a typed character
    painter.d.sync()
    assert await watch.drawn(t0, timeout=2, within=(200, 150, 300, 200))


async def test_two_servers_in_one_process(bare):
    """python-xlib's extension tables are class-wide; each watch keeps its own (Xvfb and Xvnc differ)."""
    other = LocalEnvironment(window_manager=False)
    await other.open()
    try:
        a, b = DamageWatch.open(bare.display), DamageWatch.open(other.display)
        pa, pb = Painter(bare.display), Painter(other.display)
        t0 = a.mark(), b.mark()
        pb.box(5, 5, 40, 40)
        assert await b.settled(t0[1], first=0.1, quiet=0.05, timeout=1) == "quiet"
        assert await a.settled(t0[0], first=0.1, quiet=0.05, timeout=1) == "none"  # drawn on the other server
        pa.box(5, 5, 40, 40)
        assert await a.settled(t0[0], first=0.1, quiet=0.05, timeout=1) == "quiet"
        a.close()
        b.close()
    finally:
        await other.close()


def test_turned_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("MCPWORLD_NO_DAMAGE", "1")
    assert DamageWatch.open(":0") is None


async def test_still_counts_from_the_last_drawing_before_the_call(watched):
    painter, watch = watched
    await asyncio.sleep(0.4)
    assert await watch.still(0.3, timeout=0) == "quiet"  # nothing drawn for 0.4 s: still at once, no wait at all
    painter.box(10, 10, 300, 300)
    assert await watch.still(0.3, timeout=2) == "quiet"
    assert time.monotonic() >= watch.last_draw(0.0) + 0.3  # counted from the drawing
    painter.box(10, 10, 2, 10)  # too small to count where a share is asked for: that wait ends first
    assert await watch.still(0.3, timeout=2, min_share=0.02) == "quiet"
    ignored = time.monotonic()
    assert await watch.still(0.3, timeout=2) == "quiet"  # where no share is asked, it counts
    small = watch.last_draw(0.0)
    assert ignored < small + 0.3 <= time.monotonic()


# python-xlib writes extension codes into tables on its Display class: a connection from gateway.xconn
# parses errors with its own server's codes, whatever other connections in the process loaded
async def test_a_connection_ignores_extension_codes_another_connection_left_on_the_class(bare):
    other = xdisplay.Display(bare.display)  # a plain connection, as another library opens one
    info = other.query_extension(randr.extname)
    assert info is not None, "Xvfb has RandR: the test needs an extension with error codes"
    code = info.first_error + randr.BadRRMode
    shared = protocol_display.Display.error_classes
    # what loading RandR on another server does: its codes land in the class-wide table
    protocol_display.Display.add_extension_error(other.display, code, randr.BadRRModeError)
    try:
        assert shared.get(code) is randr.BadRRModeError  # the class table was written, as in python-xlib
        d = connect(bare.display)
        try:
            assert code not in d.display.error_classes
            with pytest.raises(error.BadWindow):  # a core error still parses as one
                d.create_resource_object("window", 0x3FFFFF).get_attributes()
        finally:
            d.close()
    finally:
        shared.pop(code, None)
        other.close()
