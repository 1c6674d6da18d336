"""The computer tool on a real X display, driving a real Qt app."""

import asyncio
import base64
import io
import sys
from pathlib import Path

import pytest
from PIL import Image

from gateway.base import image_data
from gateway.tools.computer import ComputerTool, target_size
from mcpworld.envs.local import LocalEnvironment

APP = Path(__file__).with_name("qt_echo_app.py")


class Lines:
    def __init__(self, stream):
        self.stream, self.seen = stream, []

    async def expect(self, predicate, timeout=10.0):
        async def read():
            while True:
                for line in self.seen:
                    if predicate(line):
                        return line
                raw = await self.stream.readline()
                if not raw:
                    raise AssertionError(f"app exited; saw {self.seen}")
                self.seen.append(raw.decode().strip())
        return await asyncio.wait_for(read(), timeout)


@pytest.fixture
async def echo(env):
    proc = await env.spawn([sys.executable, str(APP)], stdout=asyncio.subprocess.PIPE,
                           env={"QT_QPA_PLATFORM": "xcb"})
    await env.wait_window("mcpworld-echo", 20)
    await env.settle("mcpworld-echo", 0.3, timeout=10)  # focused and drawn, as a trial's readiness
    tool = ComputerTool(env.display)
    await tool.start()
    yield tool, Lines(proc.stdout)
    await tool.close()


async def test_a_modifier_is_held_until_the_app_answers_the_click(echo):
    """An app that handles a Ctrl+click late and then reads the keyboard (Blender on a loaded machine)
    still finds Ctrl down: the tool releases it only once the app has drawn its answer."""
    tool, lines = echo
    r = await tool.call("computer", {"action": "left_click", "coordinate": [600, 750], "text": "ctrl"})
    assert not r.is_error
    assert await lines.expect(lambda line: line.startswith("busy:")) == "busy:ctrl"


def png(result):
    return Image.open(io.BytesIO(base64.b64decode(image_data(result.images[0])))).convert("RGB")


def png_size(result):
    return png(result).size


async def test_zoom_returns_the_region_at_full_resolution(echo):
    """computer_20251124's zoom: the region [x0, y0, x1, y1] cut from the screen, pixel for pixel the same part
    of a screenshot (the screen here is the model's size), with the typed text in it."""
    tool, out = echo
    await tool.call("computer", {"action": "type", "text": "zoom me"})
    await out.expect(lambda l: l == "text:zoom me")
    shot = png(await tool.call("computer", {"action": "screenshot"}))
    box = (0, 300, 400, 500)  # the line edit, centred in the window, starts at the left edge
    r = await tool.call("computer", {"action": "zoom", "region": list(box)})
    assert not r.is_error and not r.texts
    zoomed = png(r)
    assert zoomed.size == (400, 200)
    assert zoomed.tobytes() == shot.crop(box).tobytes()
    assert len(zoomed.getcolors(1 << 16) or ()) > 2  # not a flat area: the field and its text are in it


async def test_screenshot_and_cursor(echo):
    tool, _ = echo
    r = await tool.call("computer", {"action": "screenshot"})
    assert not r.is_error and png_size(r) == (1280, 800)
    await tool.call("computer", {"action": "mouse_move", "coordinate": [300, 200]})
    r = await tool.call("computer", {"action": "cursor_position"})
    assert r.texts == ["X=300,Y=200"]


async def test_type_key_and_clicks_reach_the_app(echo):
    tool, out = echo
    before = await tool.call("computer", {"action": "screenshot"})
    r = await tool.call("computer", {"action": "type", "text": "hello world"})
    assert not r.is_error and r.images  # actions return a screenshot, showing the typed text
    assert r.meta["settled"] == "quiet" and image_data(r.images[0]) != image_data(before.images[0])
    await out.expect(lambda l: l == "text:hello world")
    await tool.call("computer", {"action": "key", "text": "Return"})
    await out.expect(lambda l: l == "key:Return")
    await tool.call("computer", {"action": "right_click", "coordinate": [640, 600]})
    await out.expect(lambda l: l.startswith("press:RightButton:640,"))
    await tool.call("computer", {"action": "double_click", "coordinate": [640, 600]})
    await out.expect(lambda l: l == "double")
    await tool.call("computer", {"action": "scroll", "coordinate": [640, 600], "scroll_direction": "down", "scroll_amount": 2})
    await out.expect(lambda l: l == "wheel:down")
    await tool.call("computer", {"action": "left_mouse_down", "coordinate": [100, 700]})
    await tool.call("computer", {"action": "left_mouse_up"})
    await out.expect(lambda l: l.startswith("press:LeftButton:100,"))


@pytest.mark.parametrize("args,problem", [
    ({"action": "left_click_drag", "coordinate": [1, 1]}, "start_coordinate"),
    ({"action": "type"}, "needs text"),
    ({"action": "mouse_move", "coordinate": [5000, 1]}, "outside"),
    ({"action": "fly"}, "action"),
    ({"action": "wait"}, "duration"),
    ({"action": "scroll", "coordinate": [1, 1]}, "scroll_direction"),
    ({"action": "zoom", "region": [300, 300, 100, 400]}, "empty"),
])
async def test_bad_arguments_are_errors_the_agent_sees(echo, args, problem):
    tool, _ = echo
    r = await tool.call("computer", args)
    assert r.is_error and problem in r.texts[0]


def test_model_size_for_large_screens():
    assert target_size(1280, 800) == (1280, 800)
    assert target_size(1920, 1200) == (1280, 800)
    assert target_size(2560, 1440) == (1366, 768)
    assert target_size(1600, 1200) == (1024, 768)


async def test_coordinates_are_scaled_on_a_large_screen():
    big = LocalEnvironment(width=1920, height=1200, window_manager=False)
    await big.open()
    tool = ComputerTool(big.display)
    try:
        await tool.start()
        assert tool.specs()[0].display == (1280, 800)
        r = await tool.call("computer", {"action": "mouse_move", "coordinate": [640, 400]})
        assert png_size(r) == (1280, 800)
        import xdo
        loc = xdo.Xdo(big.display).get_mouse_location()
        assert (loc.x, loc.y) == (960, 600)
        assert (await tool.call("computer", {"action": "cursor_position"})).texts == ["X=640,Y=400"]
        # zoom shows the screen's own pixels: a quarter of the model's screen is a quarter of the real one
        assert png_size(await tool.call("computer", {"action": "zoom", "region": [0, 0, 640, 400]})) == (960, 600)
    finally:
        await tool.close()
        await big.close()


async def test_without_damage_captures_are_compared(echo, monkeypatch):
    """The fallback where a server has no DAMAGE: still the screenshot shows the action's effect."""
    monkeypatch.setenv("MCPWORLD_NO_DAMAGE", "1")
    _, out = echo
    tool = ComputerTool(echo[0].display)
    await tool.start()
    try:
        before = await tool.call("computer", {"action": "screenshot"})
        r = await tool.call("computer", {"action": "type", "text": "abc"})
        await out.expect(lambda l: l == "text:abc")
        assert r.meta["settled"] == "captures" and image_data(r.images[0]) != image_data(before.images[0])
    finally:
        await tool.close()
