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


class XWindows:
    """Top-level windows, their names and the focus, read from the EWMH properties the window manager keeps.

    python-xlib, not libxdo: libxdo keeps interned atoms in static variables, so once a process has
    talked to one X server (a local Xvfb) its name and focus lookups on another (a container's Xvnc)
    use the wrong atoms and find nothing."""

    def __init__(self, display: str):
        from gateway.xconn import connect

        self._d = connect(display)  # core protocol only, with its own tables
        self._root = self._d.screen().root
        atom = self._d.intern_atom
        self._client_list, self._active = atom("_NET_CLIENT_LIST"), atom("_NET_ACTIVE_WINDOW")
        self._net_name, self._utf8, self._wm_state = atom("_NET_WM_NAME"), atom("UTF8_STRING"), atom("WM_STATE")

    def __enter__(self) -> XWindows:
        return self

    def __exit__(self, *exc) -> None:
        self._d.close()

    def _window(self, wid: int):
        return self._d.create_resource_object("window", wid)

    def visible_windows(self) -> list[int]:
        """Managed windows in the normal (shown) state; without a window manager, the mapped top-levels."""
        from Xlib import X
        from Xlib.error import XError

        prop = self._root.get_full_property(self._client_list, X.AnyPropertyType)
        out = []
        if prop is not None:
            for wid in prop.value:
                try:
                    state = self._window(wid).get_full_property(self._wm_state, X.AnyPropertyType)
                except XError:  # gone meanwhile
                    continue
                if state is not None and state.value and state.value[0] == 1:  # ICCCM NormalState
                    out.append(int(wid))
            return out
        for child in self._root.query_tree().children:
            try:
                if child.get_attributes().map_state == X.IsViewable:
                    out.append(child.id)
            except XError:
                continue
        return out

    def name(self, wid: int) -> str | None:
        from Xlib.error import XError

        try:
            w = self._window(wid)
            prop = w.get_full_property(self._net_name, self._utf8)
            if prop is not None and prop.value:
                value = prop.value
                return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
            name = w.get_wm_name()
        except XError:
            return None
        return name.decode(errors="replace") if isinstance(name, bytes) else name

    def active(self) -> int | None:
        from Xlib import X

        prop = self._root.get_full_property(self._active, X.AnyPropertyType)
        return int(prop.value[0]) if prop is not None and len(prop.value) and prop.value[0] else None

    def geometry(self, wid: int) -> tuple[int, int, int, int] | None:
        """The window's client area on the screen (left, top, width, height), without the frame."""
        from Xlib.error import XError

        try:
            w = self._window(wid)
            g = w.get_geometry()
            at = w.translate_coords(self._root, 0, 0)
            return -at.x, -at.y, g.width, g.height
        except XError:
            return None

    def has_input_focus(self, wid: int) -> bool:
        """Whether the X input focus is in this window (or a child). The window manager names the active
        window first and the app (WM_TAKE_FOCUS) takes the focus after, so keys sent in between go astray."""
        from Xlib.error import XError

        try:
            focus = self._d.get_input_focus().focus
            for _ in range(16):
                if not hasattr(focus, "id") or focus.id == self._root.id:
                    return False
                if focus.id == wid:
                    return True
                focus = focus.query_tree().parent
        except XError:
            pass
        return False


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
            await self.wait_focus(name_regex, timeout)
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
