"""Task 64: the exported file is a PNG of the asked size that shows the valley map: the districts' pale green
fills much of it, and the lakes' blue and the towns' red are on it. A blank image of the right size, or a
render of another map, fails."""

from PIL import Image, ImageChops

# each layer's fill colour and the least share of the image it covers in the valley map at any export size
COLOURS = {"districts": ((199, 233, 192), 0.15), "lakes": ((49, 130, 189), 0.002), "towns": ((215, 48, 31), 0.00003)}
TOLERANCE = 12  # per channel: antialiased edges aside, QGIS paints the fills in their exact colours


def _share(im: Image.Image, colour: tuple[int, int, int]) -> float:
    diff = ImageChops.difference(im, Image.new("RGB", im.size, colour)).split()
    furthest = ImageChops.lighter(ImageChops.lighter(diff[0], diff[1]), diff[2])
    return furthest.point(lambda v: 255 if v <= TOLERANCE else 0).histogram()[255] / (im.width * im.height)


def image_shows_the_map(events, state, params) -> bool:
    written = [e for e in events if e.name == "image_file"]
    if not written:
        return False
    with Image.open(written[-1].payload["path"]) as im:
        if im.format != "PNG" or im.size != (int(params["width"]), int(params["height"])):
            return False
        rgb = im.convert("RGB")
    return all(_share(rgb, colour) >= share for colour, share in COLOURS.values())
