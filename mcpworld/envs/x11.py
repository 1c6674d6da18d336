"""What every backend whose desktop is an X display shares: waiting for windows, the focus, a still screen.

The display may be local (":3") or a container's X server reached over its network ("172.18.0.2:0");
libxdo, mss and xprop work the same on both.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import time
from pathlib import Path

from gateway.xwindows import XWindows
from mcpworld.errors import EnvironmentSetupError, PrerequisiteError


POLL_S = 0.01  # window and focus polls: one connection per wait, a few small requests each
STILL_SHARE = 0.02  # a still screen ignores drawings smaller than this share of it (a caret, a clock)

# xfwm4's own first-run settings (Debian bookworm's xfwm4 4.18)
XFCONF_DEFAULTS = Path(__file__).with_name("xfconf")


def seed_xfconf(home: Path, owner: int | None = None, group: int | None = None) -> None:
    """Give a new home xfwm4's default settings: in an empty xfconf, xfwm4 writes its ~100 defaults one
    by one and reloads its theme after each, 0.8 s of a 1 s start (found with strace)."""
    target = home / ".config/xfce4/xfconf/xfce-perchannel-xml"
    shutil.copytree(XFCONF_DEFAULTS, target, dirs_exist_ok=True)
    if owner is not None:  # the desktop's user, so its xfconfd can save changes
        group = owner if group is None else group
        for d, _, files in os.walk(home / ".config"):
            os.chown(d, owner, group)
            for f in files:
                os.chown(os.path.join(d, f), owner, group)


FOCUS_GRACE_S = 3.0  # for the window manager to focus a new window by itself


class X11Desktop:
    display: str

    async def wait_window_manager(self, timeout: float = 15.0) -> None:
        """Wait until the window manager announces itself (EWMH): apps started earlier behave differently
        (OBS, for one, then drops its window-capture source for the whole run)."""
        xprop = shutil.which("xprop")
        if not xprop:
            raise PrerequisiteError("'xprop' is not installed (x11-utils; run `make setup`)")
        deadline = time.monotonic() + timeout
        while True:
            proc = await asyncio.create_subprocess_exec(
                xprop, "-display", self.display, "-root", "_NET_SUPPORTING_WM_CHECK",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
            out, _ = await proc.communicate()
            if b"window id" in out:
                return
            if time.monotonic() > deadline:
                raise asyncio.TimeoutError("the window manager did not set _NET_SUPPORTING_WM_CHECK")
            await asyncio.sleep(0.05)

    async def wait_window(self, name_regex: str, timeout: float) -> int:
        pattern = re.compile(name_regex)
        deadline = time.monotonic() + timeout
        with XWindows(self.display) as xw:
            while time.monotonic() < deadline:
                for win in xw.visible_windows():
                    if pattern.search(xw.name(win) or ""):
                        return win
                await asyncio.sleep(POLL_S)
        raise EnvironmentSetupError(f"no window matching /{name_regex}/ appeared within {timeout:.0f}s")

    def active_window_name(self) -> str | None:
        """The name of the window that has the keyboard focus, or None if no window has it."""
        with XWindows(self.display) as xw:
            win = xw.active()
            return xw.name(win) if win else None

    async def wait_focus(self, name_regex: str, timeout: float) -> str:
        """Until the active window's name matches and the app has taken the input focus into it."""
        pattern = re.compile(name_regex)
        deadline = time.monotonic() + timeout
        with XWindows(self.display) as xw:
            while True:
                win = xw.active()
                name = xw.name(win) if win else None
                if name is not None and pattern.search(name) and xw.has_input_focus(win):
                    return name
                if time.monotonic() > deadline:
                    raise EnvironmentSetupError(f"no window matching /{name_regex}/ had the focus within "
                                                f"{timeout:.0f}s (focused: {name!r})")
                await asyncio.sleep(POLL_S)

    # -- drawing ---------------------------------------------------------------------
    def drawing(self):
        """The display's DamageWatch (gateway.damage), opened on first use on the running loop; None
        where the server has no DAMAGE. Open it early (at launch) and a later wait for a still screen
        knows what was drawn before it began."""
        from gateway.damage import DamageWatch
        from gateway.screen import Screen

        watch = getattr(self, "_drawing", None)
        if watch is not None and watch.usable():
            return watch
        self.close_drawing()
        if getattr(self, "_no_drawing", False):
            return None
        screen = Screen(self.display)
        watch = DamageWatch.open(self.display, screen.region)
        if watch is None:
            screen.close()
            self._no_drawing = True
            return None
        self._drawing, self._drawing_screen = watch, screen
        return watch

    def close_drawing(self) -> None:
        """Stop watching (a trial with no computer tool, once ready; the backends' close())."""
        watch = getattr(self, "_drawing", None)
        if watch is not None:
            watch.close()
            self._drawing_screen.close()
            self._drawing = None

    async def settle(self, name_regex: str, quiet: float, timeout: float, paint_timeout: float = 0.0) -> None:
        """Focus, then a still screen, within `timeout`; between them, with a paint_timeout, paint. A window
        takes the focus as it maps, and some apps (Blender on software GL, under load) leave it one flat
        colour for seconds before drawing: a still screen alone passes, and a click then lands on nothing.
        A still screen is `quiet` seconds without a drawing that changed pixels (from DAMAGE events; small
        ones, under STILL_SHARE of the screen such as a blinking caret, do not count), or where the server
        has no DAMAGE, identical captures for that long."""
        from gateway.screen import Screen

        deadline = time.monotonic() + timeout
        watch = self.drawing()
        try:
            await self.wait_focus(name_regex, min(timeout, FOCUS_GRACE_S))
        except EnvironmentSetupError:
            # the window manager gave the window no focus (seen with Blender in the XFCE container: every key
            # of a trial then went nowhere): ask it to, as a person would click the window before typing
            self._activate(name_regex)
            try:
                await self.wait_focus(name_regex, max(0.5, deadline - time.monotonic()))
            except EnvironmentSetupError:
                pass  # still wait for a still screen: some window managers never hand out the focus
        screen = Screen(self.display)
        try:
            if paint_timeout:
                await self._wait_painted(screen, re.compile(name_regex), paint_timeout, watch)
                deadline = max(deadline, time.monotonic() + 2.0)  # a first paint is seldom the last
            if watch is not None:
                await watch.still(quiet, timeout=max(0.5, deadline - time.monotonic()), min_share=STILL_SHARE)
                return
            interval = 0.05
            await screen.settle(timeout=max(0.5, deadline - time.monotonic()), interval=interval,
                                quiet=max(1, round(quiet / interval)))
        finally:
            screen.close()

    def _activate(self, name_regex: str) -> None:
        pattern = re.compile(name_regex)
        with XWindows(self.display) as xw:
            win = next((w for w in xw.visible_windows() if pattern.search(xw.name(w) or "")), None)
            if win is not None:
                xw.activate(win)

    async def _wait_painted(self, screen, pattern: re.Pattern, timeout: float, watch=None) -> None:
        """Until the window whose name matches (the active one first) holds more than one colour, or the
        timeout; looked at again when something is drawn (or every POLL_S without DAMAGE)."""
        deadline = time.monotonic() + timeout
        with XWindows(self.display) as xw:
            while time.monotonic() < deadline:
                active = xw.active()
                wins = ([active] if active else []) + [w for w in xw.visible_windows() if w != active]
                win = next((w for w in wins if pattern.search(xw.name(w) or "")), None)
                geom = xw.geometry(win) if win else None
                if geom is None or not screen.is_flat(geom):
                    return
                if watch is not None:
                    await watch.next_draw(min(0.5, max(0.0, deadline - time.monotonic())))
                else:
                    await asyncio.sleep(POLL_S)
