"""Fast in-process screen capture (mss) and PNG encoding; waits for the screen to settle."""

from __future__ import annotations

import asyncio
import hashlib
import io
import time

import mss
import mss.exception
from PIL import Image


class Screen:
    def __init__(self, display: str):
        self.display = display
        try:
            self._mss = mss.MSS(display=display)
        except mss.exception.ScreenShotError:
            # mss's XCB backends take the first list of 24-bit visuals, and TigerVNC's Xvnc (the container
            # desktops) announces depth 24 twice, the root visual in the second; Xlib's reads it fine
            self._mss = mss.MSS(display=display, backend="xlib")
        mon = self._mss.monitors[0]
        self.width, self.height = mon["width"], mon["height"]

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

    def png(self, size: tuple[int, int] | None = None, compress_level: int = 1) -> bytes:
        shot = self.grab_raw()
        img = Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX")
        if size and size != img.size:
            img = img.resize(size, Image.Resampling.LANCZOS)
        buf = io.BytesIO()
        img.save(buf, "PNG", compress_level=compress_level)
        return buf.getvalue()

    def close(self) -> None:
        self._mss.close()
