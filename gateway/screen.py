"""Fast in-process screen capture (mss) and PNG encoding; waits for the screen to settle."""

from __future__ import annotations

import asyncio
import hashlib
import io
import threading
import time

import mss
import mss.exception
from PIL import Image


class Screen:
    def __init__(self, display: str):
        self.display = display
        self._backend = "default"
        self._local = threading.local()
        self._all: list = []
        try:
            first = self._mss
        except mss.exception.ScreenShotError:
            # mss's XCB backends take the first list of 24-bit visuals, and TigerVNC's Xvnc (the container
            # desktops) announces depth 24 twice, the root visual in the second; Xlib's reads it fine
            self._backend = "xlib"
            first = self._mss
        mon = first.monitors[0]
        self.width, self.height = mon["width"], mon["height"]

    @property
    def _mss(self):
        """One capturer per thread (grabs run in worker threads; the Xlib backend's display is thread-bound)."""
        inst = getattr(self._local, "mss", None)
        if inst is None:
            inst = self._local.mss = mss.MSS(display=self.display, backend=self._backend)
            self._all.append(inst)
        return inst

    def grab_raw(self):
        return self._mss.grab(self._mss.monitors[0])

    def _digest(self) -> bytes:
        return hashlib.blake2b(self.grab_raw().raw, digest_size=16).digest()

    async def settle(self, timeout: float = 1.5, interval: float = 0.04, quiet: int = 2) -> float:
        """Return once `quiet` consecutive grabs are identical (or at the timeout); seconds waited."""
        start = time.monotonic()
        last, same = None, 0
        while time.monotonic() - start < timeout:
            d = self._digest()
            same = same + 1 if d == last else 0
            if same >= quiet:
                break
            last = d
            await asyncio.sleep(interval)
        return time.monotonic() - start

    def is_flat(self, box: tuple[int, int, int, int]) -> bool:
        """Whether the box (left, top, width, height; clipped to the screen) is one colour: a window not yet painted."""
        left, top, width, height = box
        left, top = max(0, left), max(0, top)
        width, height = min(width, self.width - left), min(height, self.height - top)
        if width <= 0 or height <= 0:
            return False
        shot = self._mss.grab({"left": left, "top": top, "width": width, "height": height})
        return Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX").getcolors(1) is not None

    def png(self, size: tuple[int, int] | None = None, compress_level: int = 1) -> bytes:
        shot = self.grab_raw()
        img = Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX")
        if size and size != img.size:
            img = img.resize(size, Image.Resampling.LANCZOS)
        buf = io.BytesIO()
        img.save(buf, "PNG", compress_level=compress_level)
        return buf.getvalue()

    def close(self) -> None:
        for inst in self._all:
            try:
                inst.close()
            except Exception:  # one made in another thread may refuse; the process frees it anyway
                pass
        self._all.clear()
