"""Task 91: the saved screenshot is a PNG of the requested size."""

from PIL import Image


def screenshot_has_the_size(events, state, params) -> bool:
    saved = [e for e in events if e.name == "screenshot_file"]
    if not saved:
        return False
    with Image.open(saved[-1].payload["path"]) as im:
        return im.format == "PNG" and im.size == (int(params["width"]), int(params["height"]))
