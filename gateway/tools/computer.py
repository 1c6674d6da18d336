"""The computer tool: Anthropic's computer_20250124 action set, and computer_20251124's zoom, on the environment's
X display.

Pointer input and key combinations go through libxdo (python-libxdo-ng), typed text through
gateway.keyboard (XTEST, each modifier a step of its own), screenshots through mss. When the screen is larger
than the model's working size, screenshots are scaled down and coordinates scaled back up.

After an input action the tool returns once the app has finished drawing its response: DAMAGE events
say when (gateway.damage); a screen without DAMAGE is polled for identical captures instead. The
screenshot is kept as pixels and encoded only if the caller reads it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from gateway.actions import COMPUTER_ACTIONS
from gateway.base import ToolProvider, ToolResult, ToolSpec
from gateway.modes import COMPUTER_TOOL, Kind
from gateway.damage import DamageWatch
from gateway.keyboard import Keyboard
from gateway.screen import Frame, Screen
from gateway.xwindows import XWindows

# Working sizes a model is trained on; pick the one with the screen's aspect ratio.
MODEL_SIZES = {"XGA": (1024, 768), "WXGA": (1280, 800), "FWXGA": (1366, 768)}
TYPE_HOLD = 0.006  # a key held down, and the pause after it (xdotool's default pace: 12 ms a character)
TYPE_ECHO_WAIT = 0.25  # at most, per character, for the app to draw what was typed before the next
KEY_DELAY_US = 2_000  # between the presses and releases of a key combination
# Settling after an action. With nothing drawn, the action returns `first` after its input (an app that
# reacts later than this is a wait the agent asks for); after a drawing, once `quiet` passed without one.
SETTLE_FIRST = 0.10
SETTLE_QUIET = 0.04
# a modifier held for a click: until the app draws its answer, at most this long (an app that reads the
# keyboard's state when it handles the click, late on a loaded machine, saw it released)
MODIFIER_HOLD = 2.0
BUTTONS = {"left_click": 1, "middle_click": 2, "right_click": 3}
SCROLL_BUTTONS = {"up": 4, "down": 5, "left": 6, "right": 7}
NEED_COORD = {"mouse_move", "left_click_drag"}
NEED_TEXT = {"key", "type", "hold_key"}


class ComputerArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Literal[COMPUTER_ACTIONS]  # type: ignore[valid-type]
    coordinate: tuple[int, int] | None = None
    start_coordinate: tuple[int, int] | None = None
    text: str | None = None
    scroll_direction: Literal["up", "down", "left", "right"] | None = None
    scroll_amount: int | None = None
    duration: float | None = None
    region: tuple[int, int, int, int] | None = None  # zoom: [x0, y0, x1, y1] in the model's coordinates


def target_size(width: int, height: int) -> tuple[int, int]:
    if width <= 1366 and height <= 800:
        return width, height
    ratio = width / height
    best = min(MODEL_SIZES.values(), key=lambda s: abs(s[0] / s[1] - ratio))
    return best


class ComputerTool(ToolProvider):
    name = COMPUTER_TOOL

    def __init__(self, display: str, settle_timeout: float = 1.5, first: float = SETTLE_FIRST,
                 quiet: float = SETTLE_QUIET, drawing: Callable[[], DamageWatch | None] | None = None):
        """`drawing`: the environment's own DamageWatch, shared (one X connection per display); without
        it the tool opens its own."""
        self.display = display
        self._drawing = drawing
        self.settle_timeout, self.first, self.quiet = settle_timeout, first, quiet
        self._screen: Screen | None = None
        self._watch: DamageWatch | None = None
        self._xdo = None
        self._keyboard: Keyboard | None = None
        self._windows: XWindows | None = None  # the focused window, for the typing pace
        self._held: list[str] = []

    async def start(self) -> None:
        import xdo  # needs libxdo3 at import

        self._screen = Screen(self.display)
        self._watch = self._drawing() if self._drawing else DamageWatch.open(self.display, self._screen.region)
        self._xdo = xdo.Xdo(self.display)
        self._keyboard = Keyboard(self.display)
        self._windows = XWindows(self.display)  # not libxdo's: its atoms are static, right for one X server only
        self.width, self.height = self._screen.width, self._screen.height
        self.model_w, self.model_h = target_size(self.width, self.height)

    async def close(self) -> None:
        if self._watch and not self._drawing:  # a shared watch is its environment's to close
            self._watch.close()
        self._watch = None
        if self._screen:
            self._screen.close()
        if self._windows is not None:
            self._windows.close()
            self._windows = None
        if self._keyboard is not None:
            self._keyboard.close()
            self._keyboard = None
        self._xdo = None

    def specs(self) -> list[ToolSpec]:
        schema = ComputerArgs.model_json_schema()
        schema.pop("title", None)
        return [ToolSpec(
            name=COMPUTER_TOOL, kind=Kind.GUI, input_schema=schema, display=(self.model_w, self.model_h),
            annotations={"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False},
            description=(f"Use a mouse and keyboard to interact with the desktop, and take screenshots. "
                         f"The screen is {self.model_w}x{self.model_h}. Actions: {', '.join(COMPUTER_ACTIONS)}. "
                         "Keys use xdotool names (e.g. 'ctrl+s', 'Return'). Most actions return a screenshot; zoom "
                         "returns the region [x0, y0, x1, y1] at the screen's full resolution."))]

    # -- coordinates ------------------------------------------------------------
    def _to_screen(self, xy: tuple[int, int]) -> tuple[int, int]:
        x, y = xy
        if not (0 <= x <= self.model_w and 0 <= y <= self.model_h):
            raise ValueError(f"coordinate {list(xy)} is outside the {self.model_w}x{self.model_h} screen")
        return round(x * self.width / self.model_w), round(y * self.height / self.model_h)

    def _to_model(self, x: int, y: int) -> tuple[int, int]:
        return round(x * self.model_w / self.width), round(y * self.model_h / self.height)

    async def screenshot(self) -> Frame:
        return await asyncio.to_thread(self._screen.frame, (self.model_w, self.model_h))

    async def _zoom(self, region: tuple[int, int, int, int]) -> ToolResult:
        """The region (model coordinates, corners [x0, y0, x1, y1]) cut from the screen at its own resolution,
        not scaled to the model's size: on a large screen it shows more pixels than the screenshot had."""
        x0, y0 = self._to_screen(region[:2])
        x1, y1 = self._to_screen(region[2:])
        if x1 <= x0 or y1 <= y0:
            raise ValueError(f"zoom region {list(region)} is empty: x1 > x0 and y1 > y0 are needed")
        frame = await asyncio.to_thread(self._screen.crop, (x0, y0, x1 - x0, y1 - y0))
        if frame is None:
            raise ValueError(f"zoom region {list(region)} is off the screen")
        return ToolResult.text("", frame)

    async def _type(self, text: str) -> None:
        """Each character once the app has drawn the one before, as a person types while watching the field.
        An app that also changes the field by itself (a file dialog whose completer loads a folder in the
        background, then selects in it) then takes each key between its own steps, as it would a person's;
        a burst of keys it reads late mixes with its own changes and loses or garbles some (the path OBS's
        Import Profile dialog got as ".../Dcuments/..." under load). Only drawing inside the focused window
        counts as the echo. Where nothing is drawn, the next character follows after TYPE_ECHO_WAIT;
        without a DAMAGE watch, at xdotool's pace."""
        watch = self._watch
        paced = watch is not None and watch.usable()
        focused = self._focused_box() if paced else None
        await asyncio.to_thread(self._keyboard.prepare, text)
        for ch in text:
            since = watch.mark() if paced else 0.0
            await asyncio.to_thread(self._keyboard.type_char, ch, TYPE_HOLD)
            if paced:
                await watch.drawn(since, TYPE_ECHO_WAIT, within=focused)

    def _focused_box(self) -> tuple[int, int, int, int] | None:
        """Where the window that has the keyboard focus shows (its top-level, as the window manager placed it),
        or None. Drawing elsewhere is no echo of a key: OBS's preview repaints ten times a second around its
        dialogs, and counted as one it let a path go out at burst pace (".../home/ocuments")."""
        try:
            wid = self._windows.active()
        except Exception:  # the server is going away
            return None
        return self._windows.geometry(wid) if wid else None  # None: no window manager, or no window active

    def _mark(self) -> float:
        """Now, as the drawing watch counts time (what a settle after this moment waits from)."""
        return self._watch.mark() if self._watch else time.monotonic()

    async def _settle(self, started: float, first: float | None = None) -> str:
        if self._watch is None:
            await self._screen.settle(self.settle_timeout)
            return "captures"
        return await self._watch.settled(started, first or self.first, self.quiet, self.settle_timeout,
                                         not_before=time.monotonic())

    # -- dispatch --------------------------------------------------------------
    async def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        try:
            a = ComputerArgs.model_validate(args)
            if a.action in NEED_COORD and a.coordinate is None:
                raise ValueError(f"{a.action} needs coordinate")
            if a.action == "left_click_drag" and a.start_coordinate is None:
                raise ValueError("left_click_drag needs start_coordinate and coordinate")
            if a.action in NEED_TEXT and not a.text:
                raise ValueError(f"{a.action} needs text")
            if a.action == "scroll" and a.scroll_direction is None:
                raise ValueError("scroll needs scroll_direction")
            if a.action in ("hold_key", "wait") and a.duration is None:
                raise ValueError(f"{a.action} needs duration (seconds)")
            if a.action == "zoom" and a.region is None:
                raise ValueError("zoom needs region [x0, y0, x1, y1]")
            if a.duration is not None and not 0 <= a.duration <= 100:
                raise ValueError("duration must be between 0 and 100 seconds")
            return await self._act(a)
        except (ValidationError, ValueError) as e:
            return ToolResult.error(f"computer: {e}")

    async def _act(self, a: ComputerArgs) -> ToolResult:
        import xdo

        x = self._xdo
        win = getattr(xdo.CURRENTWINDOW, "value", xdo.CURRENTWINDOW)  # the binding wants a plain int in places
        if a.action == "screenshot":
            return ToolResult.text("", await self.screenshot())
        if a.action == "cursor_position":
            loc = x.get_mouse_location()
            mx, my = self._to_model(loc.x, loc.y)
            return ToolResult.text(f"X={mx},Y={my}")
        if a.action == "zoom":
            return await self._zoom(a.region)
        if a.action == "wait":
            await asyncio.sleep(a.duration)
            return ToolResult.text("", await self.screenshot())
        started = self._mark()
        if a.coordinate is not None and a.action != "left_click_drag":
            x.move_mouse(*self._to_screen(a.coordinate))
        mods = a.text.encode() if a.text and a.action in ("left_click", "right_click", "middle_click",
                                                           "double_click", "triple_click", "scroll") else None
        if mods:
            x.send_keysequence_window_down(win, mods)
        try:
            match a.action:
                case "mouse_move":
                    pass
                case "left_click" | "right_click" | "middle_click":
                    x.click_window(win, BUTTONS[a.action])
                case "double_click" | "triple_click":
                    x.click_window_multiple(win, 1, 2 if a.action == "double_click" else 3, 80_000)
                case "left_mouse_down":
                    x.mouse_down(win, 1)
                case "left_mouse_up":
                    x.mouse_up(win, 1)
                case "left_click_drag":
                    x.move_mouse(*self._to_screen(a.start_coordinate))
                    x.mouse_down(win, 1)
                    await asyncio.sleep(0.05)
                    x.move_mouse(*self._to_screen(a.coordinate))
                    await asyncio.sleep(0.05)
                    x.mouse_up(win, 1)
                case "scroll":
                    amount = a.scroll_amount if a.scroll_amount is not None else 3
                    x.click_window_multiple(win, SCROLL_BUTTONS[a.scroll_direction], max(0, amount), 20_000)
                case "key":
                    await asyncio.to_thread(x.send_keysequence_window, win, a.text.encode(), KEY_DELAY_US)
                case "hold_key":
                    x.send_keysequence_window_down(win, a.text.encode())
                    await asyncio.sleep(a.duration)
                    x.send_keysequence_window_up(win, a.text.encode())
                case "type":
                    await self._type(a.text)
            if mods:  # held until the click has been answered on the screen, as a person holds it
                await self._settle(self._mark(), first=MODIFIER_HOLD)
        finally:
            if mods:
                x.send_keysequence_window_up(win, mods)
        acted = time.monotonic()
        how = await self._settle(started)
        shot = await self.screenshot()
        return ToolResult(ToolResult.text("", shot).content,
                          meta={"settled": how, "settle_ms": round((time.monotonic() - acted) * 1000, 1)})
