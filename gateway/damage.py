"""When the screen has finished drawing, from the X server's DAMAGE events instead of comparing captures.

The X server reports every region it draws as it draws it (DAMAGE extension, raw rectangles on the root
window, which covers every window on a desktop without or with a compositor). A wait is over once nothing
was drawn for a quiet period. What repaints on its own without changing (a live preview of a still scene)
would keep it going: during a wait, each batch of drawing is captured where it was drawn, and a region
drawn again with the same pixels as last time does not count. Pointer moves draw nothing (the cursor is
not damage).

python-xlib is not thread-safe, so a watch reads its connection on the event loop that opened it.
Without DAMAGE (or with MCPWORLD_NO_DAMAGE=1) `DamageWatch.open` returns None and callers poll captures.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import time
from collections import OrderedDict, deque
from typing import Callable

HISTORY_S = 5.0
KNOWN_REGIONS = 256  # last pixels of this many regions are kept, to tell a repaint from a change

Box = tuple[int, int, int, int]


class DamageWatch:
    def __init__(self, d, damage_id: int, width: int, height: int, grab: Callable[[Box], bytes] | None):
        self._d, self._damage_id, self._grab = d, damage_id, grab
        self.screen_area = max(1, width * height)
        # (time, the batch's bounding box, whether it changed pixels); None: drawn while nobody waited
        self.draws: deque[tuple[float, Box, bool | None]] = deque()
        self.rects: deque[tuple[float, Box]] = deque()  # each rectangle as reported (drawing clipped to what shows)
        self._pixels: OrderedDict[Box, bytes] = OrderedDict()
        self._waiting = 0
        self.opened = time.monotonic()
        self._loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()
        self._fd = d.fileno()
        self._loop.add_reader(self._fd, self._drain)
        self._closed = False

    @classmethod
    def open(cls, display: str, grab: Callable[[Box], bytes] | None = None) -> DamageWatch | None:
        """A watch on the display's root window, or None where the server has no DAMAGE (or it is turned off).
        `grab(box)` returns a region's pixels; without it, every drawing counts as a change."""
        if os.environ.get("MCPWORLD_NO_DAMAGE") == "1":
            return None
        from Xlib.ext import damage

        from gateway.xconn import connect

        d = connect(display)  # its own event and error tables: DAMAGE's codes are this server's
        pd = d.display
        info = d.query_extension(damage.extname)
        if info is None:
            d.close()
            return None
        event = type("DamageNotify", (damage.DamageNotify,), {"_code": info.first_event})
        pd.add_extension_event(info.first_event, event)
        damage.QueryVersion(display=pd, opcode=info.major_opcode, major_version=1, minor_version=1)
        screen = d.screen()
        damage_id = pd.allocate_resource_id()
        damage.DamageCreate(display=pd, opcode=info.major_opcode, damage=damage_id, drawable=screen.root.id,
                            level=damage.DamageReportRawRectangles)
        d.sync()
        watch = cls(d, damage_id, screen.width_in_pixels, screen.height_in_pixels, grab)
        watch._opcode = info.major_opcode
        watch._drain()
        watch.draws.clear()  # the first report covers the whole screen: it says nothing about now
        return watch

    # -- reading -----------------------------------------------------------------------------------
    def _drain(self) -> None:
        if self._closed:
            return
        now = time.monotonic()
        box = None
        try:
            while self._d.pending_events():
                area = getattr(self._d.next_event(), "area", None)
                if area is not None:
                    rect = (area.x, area.y, area.width, area.height)
                    box = _union(box, rect)
                    self.rects.append((now, rect))
        except Exception:  # the server went away: stop reading, callers time out on their own terms
            self._loop.remove_reader(self._fd)
            self._closed = True
        while self.draws and self.draws[0][0] < now - HISTORY_S:
            self.draws.popleft()
        while self.rects and self.rects[0][0] < now - HISTORY_S:
            self.rects.popleft()
        if box is not None:
            self.draws.append((now, box, self._changed_pixels(box) if self._waiting else None))
            self._changed.set()

    def _changed_pixels(self, box: Box) -> bool:
        if self._grab is None:
            return True
        try:
            digest = hashlib.blake2b(self._grab(box), digest_size=16).digest()
        except Exception:  # off screen, or the server is going away
            return True
        same = self._pixels.get(box) == digest
        self._pixels[box] = digest
        self._pixels.move_to_end(box)
        if len(self._pixels) > KNOWN_REGIONS:
            self._pixels.popitem(last=False)
        return not same

    def usable(self) -> bool:
        """Open, and reading on the running loop (a watch cannot follow its caller to another loop)."""
        try:
            return not self._closed and asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    @contextlib.contextmanager
    def waiting(self):
        """While inside, each drawing is captured where it was drawn, to tell a repaint from a change (a
        launch: the readiness wait after it then knows which regions only repaint)."""
        self._waiting += 1
        try:
            yield self
        finally:
            self._waiting -= 1

    async def next_draw(self, timeout: float) -> None:
        """Until something is drawn, or the timeout."""
        self._changed.clear()
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except asyncio.TimeoutError:
            pass

    async def still(self, quiet: float, timeout: float, min_share: float = 0.0) -> str:
        """Until nothing that changed pixels (at least `min_share` of the screen) was drawn for `quiet`
        seconds, counting from before the call: what the watch saw since it opened (the watch's opening
        counts as a drawing, since it did not see what came before)."""
        start = time.monotonic()
        with self.waiting():
            while True:
                self._drain()
                now = time.monotonic()
                last = max(self.last_draw(0.0, min_share) or 0.0, self.opened)
                if now - last >= quiet:
                    return "quiet"
                if now - start >= timeout:
                    return "timeout"
                await self.next_draw(min(last + quiet, start + timeout) - now)

    async def drawn(self, since: float, timeout: float, within: Box | None = None) -> bool:
        """Until something was drawn at or after `since` (True), or `timeout` seconds passed (False); with
        `within`, only drawing that shows inside that box counts (a dialog's own, not a live preview that
        repaints around it: the server reports drawing clipped to what is visible)."""
        deadline = time.monotonic() + timeout
        while True:
            self._drain()
            if (self.last_draw(since) if within is None else self._drawn_within(since, within)) is not None:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            await self.next_draw(left)

    def mark(self) -> float:
        """Now, after taking in what was drawn up to now (so it is not counted as drawn after it)."""
        self._drain()
        return time.monotonic()

    def _drawn_within(self, since: float, box: Box) -> float | None:
        return next((t for t, r in reversed(self.rects) if t >= since and _overlap(r, box)), None)

    def last_draw(self, since: float, min_share: float = 0.0) -> float | None:
        """The time of the last drawing at or after `since` that changed pixels (and covered at least
        `min_share` of the screen), or None."""
        floor = min_share * self.screen_area
        return next((t for t, box, changed in reversed(self.draws)
                     if t >= since and changed is not False and box[2] * box[3] >= floor), None)

    async def settled(self, since: float, first: float, quiet: float, timeout: float,
                      min_share: float = 0.0, not_before: float | None = None) -> str:
        """Wait until drawing that began at or after `since` has stopped. Returns "none" when nothing
        significant was drawn by `not_before + first` (not_before defaults to since), "quiet" once `quiet`
        seconds passed after the last significant drawing, "timeout" at since + timeout."""
        not_before = since if not_before is None else not_before
        deadline = since + timeout
        with self.waiting():
            return await self._settled(since, first, quiet, deadline, min_share, not_before)

    async def _settled(self, since, first, quiet, deadline, min_share, not_before) -> str:
        while True:
            self._drain()
            now = time.monotonic()
            last = self.last_draw(since, min_share)
            if last is None:
                until = not_before + first
                if now >= until:
                    return "none"
            else:
                until = max(last + quiet, not_before)
                if now >= until:
                    return "quiet"
            if now >= deadline:
                return "timeout"
            await self.next_draw(max(0.0, min(until, deadline) - now))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._loop.remove_reader(self._fd)
            from Xlib.ext import damage

            damage.DamageDestroy(display=self._d.display, opcode=self._opcode, damage=self._damage_id)
            self._d.close()
        except Exception:  # the server or the loop is already gone
            pass


def _union(a: Box | None, b: Box) -> Box:
    if a is None:
        return b
    x, y = min(a[0], b[0]), min(a[1], b[1])
    return x, y, max(a[0] + a[2], b[0] + b[2]) - x, max(a[1] + a[3], b[1] + b[3]) - y


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]
