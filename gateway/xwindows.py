"""Top-level windows, their names and the focus, as the window manager keeps them (EWMH): read by the
environments' waits and by the computer tool's typing pace."""

from __future__ import annotations


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
        self.close()

    def close(self) -> None:
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

    def activate(self, wid: int) -> None:
        """Ask the window manager to activate the window (EWMH, as a pager does), and give it the input focus."""
        from Xlib import X
        from Xlib.error import XError
        from Xlib.protocol import event

        try:
            msg = event.ClientMessage(window=self._window(wid), client_type=self._active,
                                      data=(32, [2, X.CurrentTime, 0, 0, 0]))
            self._root.send_event(msg, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
            self._window(wid).set_input_focus(X.RevertToParent, X.CurrentTime)
            self._d.sync()
        except XError:  # gone meanwhile
            pass

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
