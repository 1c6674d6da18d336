"""Task 91: the saved screenshot is a PNG of the requested size that shows the scene: scaled down, it matches
OBS's own render of the scene at the end of the trial (the state's scene_thumbs), so a blank or made-up
image of the right size fails."""

from PIL import Image, ImageChops, ImageStat

MAX_MEAN_DIFFERENCE = 24  # of 255, per channel: scaling and PNG rounding stay far below; another picture does not


def screenshot_shows_the_scene(events, state, params) -> bool:
    saved = [e for e in events if e.name == "screenshot_file"]
    thumbs = (state or {}).get("scene_thumbs", {})
    if not saved or params["scenename"] not in thumbs:
        return False
    reference = Image.new("RGB", (16, 9))
    reference.putdata([tuple(px) for px in thumbs[params["scenename"]]])
    with Image.open(saved[-1].payload["path"]) as im:
        if im.format != "PNG" or im.size != (int(params["width"]), int(params["height"])):
            return False
        small = im.convert("RGB").resize(reference.size)
    return max(ImageStat.Stat(ImageChops.difference(small, reference)).mean) <= MAX_MEAN_DIFFERENCE
