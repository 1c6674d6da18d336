"""What every backend whose desktop is an X display shares: waiting for windows, the focus, a still screen.

The display may be local (":3") or a container's X server reached over its network ("172.18.0.2:0");
libxdo, mss and xprop work the same on both.
"""

from __future__ import annotations

import asyncio
import shutil
import time

from mcpworld.errors import EnvironmentSetupError, PrerequisiteError


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
        import xdo  # libxdo binding, imported late: needs libxdo3

        x = xdo.Xdo(self.display)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                found = x.search_windows(winname=name_regex.encode(), only_visible=True, require=True)
                if found:
                    return int(found[0])
                await asyncio.sleep(0.05)
        finally:
            del x
        raise EnvironmentSetupError(f"no window matching /{name_regex}/ appeared within {timeout:.0f}s")

    def active_window_name(self) -> str | None:
        """The name of the window that has the keyboard focus, or None if no window has it."""
        import xdo

        x = xdo.Xdo(self.display)
        try:
            win = x.get_active_window()
            name = x.get_window_name(win) if win else None
        except xdo.XdoException:  # no active window yet
            return None
        finally:
            del x
        return name.decode(errors="replace") if isinstance(name, bytes) else name

    async def wait_focus(self, name_regex: str, timeout: float) -> str:
        import re

        pattern = re.compile(name_regex)
        deadline = time.monotonic() + timeout
        while True:
            name = self.active_window_name()
            if name is not None and pattern.search(name):
                return name
            if time.monotonic() > deadline:
                raise EnvironmentSetupError(f"no window matching /{name_regex}/ had the focus within {timeout:.0f}s "
                                            f"(focused: {name!r})")
            await asyncio.sleep(0.05)

    async def settle(self, name_regex: str, quiet: float, timeout: float) -> None:
        from gateway.screen import Screen

        deadline = time.monotonic() + timeout
        try:
            await self.wait_focus(name_regex, timeout)
        except EnvironmentSetupError:
            pass  # still wait for a still screen: some window managers never hand out the focus
        screen = Screen(self.display)
        try:
            interval = 0.05
            await screen.settle(timeout=max(0.5, deadline - time.monotonic()), interval=interval,
                                quiet=max(1, round(quiet / interval)))
        finally:
            screen.close()
