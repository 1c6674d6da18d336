"""Fast in-process screen capture (mss) and PNG encoding; waits for the screen to settle."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import threading
import time

import mss
import mss.exception
from PIL import Image


class Frame:
    """One capture, kept as raw pixels: PNG and thumbnails are made from it only when asked for (a frame
    an agent never reads, like every one an oracle's action returns, is never encoded)."""

    def __init__(self, shot, size: tuple[int, int] | None = None):
        self._shot = shot
        self.size = size or shot.size
        self._png: bytes | None = None
        self._lock = threading.Lock()

    def image(self) -> Image.Image:
        img = Image.frombytes("RGB", self._shot.size, self._shot.bgra, "raw", "BGRX")
        return img if self.size == img.size else img.resize(self.size, Image.Resampling.LANCZOS)

    def png(self, compress_level: int = 1) -> bytes:
        with self._lock:
            if self._png is None:
                buf = io.BytesIO()
                self.image().save(buf, "PNG", compress_level=compress_level)
                self._png = buf.getvalue()
            return self._png

    def b64(self) -> str:
        return base64.b64encode(self.png()).decode()

    def thumbnail_jpeg(self, width: int, quality: int = 70) -> bytes:
        img = Image.frombytes("RGB", self._shot.size, self._shot.bgra, "raw", "BGRX")
        img.thumbnail((width, width * img.height // max(1, img.width)))
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=quality)
        return buf.getvalue()


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

    def region(self, box: tuple[int, int, int, int]) -> bytes:
        """The raw pixels of a box (left, top, width, height), clipped to the screen."""
        area = self._clip(box)
        return bytes(self._mss.grab(area).raw) if area else b""

    def _clip(self, box: tuple[int, int, int, int]) -> dict | None:
        """The box as an mss area inside the screen, or None if nothing of it is on screen."""
        left, top, width, height = box
        left, top = max(0, left), max(0, top)
        width, height = min(width, self.width - left), min(height, self.height - top)
        if width <= 0 or height <= 0:
            return None
        return {"left": left, "top": top, "width": width, "height": height}

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
        area = self._clip(box)
        if area is None:
            return False
        shot = self._mss.grab(area)
        return Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX").getcolors(1) is not None

    def frame(self, size: tuple[int, int] | None = None) -> Frame:
        return Frame(self.grab_raw(), size)

    def crop(self, box: tuple[int, int, int, int]) -> Frame | None:
        """A box (left, top, width, height; clipped to the screen) at the screen's own resolution, or None."""
        area = self._clip(box)
        return Frame(self._mss.grab(area)) if area else None

    def png(self, size: tuple[int, int] | None = None, compress_level: int = 1) -> bytes:
        return self.frame(size).png(compress_level)

    def close(self) -> None:
        for inst in self._all:
            try:
                inst.close()
            except Exception:  # one made in another thread may refuse; the process frees it anyway
                pass
        self._all.clear()
