"""Typed text as key presses through XTEST, each modifier a step of its own.

libxdo sends a character that needs Shift as one burst (Shift press, key press) and the X server then
sometimes delivers the key press to a client before the XkbStateNotify that says Shift is down. Qt 5.15
takes a key's symbol from its XKB state, fed by those notifications, so the "M" of "Media" arrived in OBS
as "m" (seen in OBS's own xcb reads: Shift press, M press with state Shift, then the state notification).
Here the server has handled the modifier press, and sent everything it caused, before the key is sent:
a round trip (sync) separates them, and the key is released before the modifier, as a hand does.

A character the keymap lacks is bound to a spare keycode (as libxdo does) and the binding stays until
the pool of spare keycodes is used up: a client that reads the keymap late, when it handles the
mapping change, must still find the symbol there. A client may also handle the key before it has read
the new keymap: Chromium (VS Code's window) dropped the "ø" typed right after it was bound. So a text's
missing characters are bound before its first key, and the keys wait BIND_SETTLE after the last binding.
"""

from __future__ import annotations

import time

from Xlib import X, XK

SPECIAL = {"\n": "Return", "\r": "Return", "\t": "Tab", " ": "space"}
SHIFT_LEVEL = 1  # the core keymap's index of a symbol typed with Shift (group 1, level 2)
REBIND_GAP = 0.5  # before a spare keycode is bound again: the client has read its last binding
BIND_SETTLE = 0.3  # after a binding, before the key that needs it: the client has read the new keymap


def keysym_of(ch: str) -> int:
    name = SPECIAL.get(ch)
    if name:
        return XK.string_to_keysym(name)
    cp = ord(ch)
    if 0x20 <= cp <= 0x7e or 0xa0 <= cp <= 0xff:  # Latin-1: the keysym is the code point
        return cp
    return 0x01000000 | cp  # any other Unicode character


class Keyboard:
    def __init__(self, display: str):
        from Xlib.ext import xtest

        from gateway.xconn import connect

        self._d = connect(display)
        info = self._d.query_extension(xtest.extname)
        if info is None:
            self._d.close()
            raise RuntimeError(f"X display {display} has no XTEST extension: no input can be sent")
        self._opcode = info.major_opcode
        self._xtest = xtest
        first = self._d.display.info.min_keycode
        count = self._d.display.info.max_keycode - first + 1
        self._map = {first + i: list(row) for i, row in enumerate(self._d.get_keyboard_mapping(first, count))}
        self._shift = self._code_of(XK.XK_Shift_L, levels=(0,))[0]
        # highest first: libxdo (the tool's key combinations) borrows the lowest spare keycode for a moment
        self._spare = sorted((c for c, row in self._map.items() if not any(row)), reverse=True)
        self._bound_at: dict[int, float] = {}  # spare keycode -> when it was last bound

    def close(self) -> None:
        self._d.close()

    def _code_of(self, keysym: int, levels=(0, SHIFT_LEVEL)) -> tuple[int, int] | None:
        """(keycode, level) for the symbol on the lowest level it has among `levels`, or None."""
        best = None
        for code, row in self._map.items():
            for level in levels:
                if level < len(row) and row[level] == keysym and (best is None or level < best[1]):
                    best = (code, level)
        return best

    def _fake(self, code: int, press: bool, delay_ms: int = 0, sync: bool = True) -> None:
        """One key event; `delay_ms`: the server holds it back that long after the one before (XTEST's time)."""
        self._xtest.FakeInput(display=self._d.display, opcode=self._opcode,
                              event_type=X.KeyPress if press else X.KeyRelease, detail=code,
                              time=delay_ms or X.CurrentTime, root=X.NONE, x=0, y=0)
        if sync:
            self._d.sync()  # handled, and its events sent, before whatever comes next

    def _bind(self, keysym: int, settle: bool = True) -> int:
        """A spare keycode for a symbol the keymap lacks (one bound before is found in the map by `_code_of`)."""
        if not self._spare:
            raise RuntimeError("the keymap has no spare keycode to bind a character to")
        code = min(self._spare, key=lambda c: self._bound_at.get(c, 0.0))  # the one bound longest ago
        wait = self._bound_at.get(code, 0.0) + REBIND_GAP - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._d.change_keyboard_mapping(code, [(keysym, keysym)])
        self._d.sync()
        self._map[code] = [keysym, keysym]
        self._bound_at[code] = time.monotonic()
        if settle:
            time.sleep(BIND_SETTLE)
        return code

    def prepare(self, text: str) -> None:
        """Binds the characters of `text` the keymap lacks, as many as there are spare keycodes not bound
        within REBIND_GAP, then waits BIND_SETTLE once (the rest are bound as they come, each waited for)."""
        now = time.monotonic()
        free = sum(1 for c in self._spare if self._bound_at.get(c, 0.0) + REBIND_GAP <= now)
        missing = list(dict.fromkeys(k for k in map(keysym_of, text) if self._code_of(k) is None))
        for keysym in missing[:free]:
            self._bind(keysym, settle=False)
        if missing[:free]:
            time.sleep(BIND_SETTLE)

    def type_char(self, ch: str, hold: float) -> None:
        """One character: press, `hold` seconds (timed by the server), release (and as long again after)."""
        keysym = keysym_of(ch)
        found = self._code_of(keysym)
        code, shifted = found if found else (self._bind(keysym), 0)
        if shifted:
            self._fake(self._shift, True)
        # the press and its release go out together, the release held back by the server: a release sent
        # after a sleep came late when this process was descheduled under load, and the server's autorepeat
        # (660 ms) had doubled the key meanwhile ("Surrrrvey" in Anki's search bar)
        self._fake(code, True, sync=False)
        self._fake(code, False, delay_ms=max(1, round(hold * 1000)))
        if shifted:
            self._fake(self._shift, False)
        time.sleep(hold)
