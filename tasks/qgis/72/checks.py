"""Task 72: QGIS exported the map to the asked PDF at the asked size in pixels. A PDF page has no pixels: QGIS
sizes it as pixels x 72 / dpi points, so the page is read against the size and resolution QGIS's own export
reported (its dialog or the bridge, carried by `map_export_started`), and that size must be the asked one."""

import re

SLACK = 1.5  # points: QGIS rounds the page size


def pdf_has_the_asked_shape(events, state, params) -> bool:
    width, height = int(params["width"]), int(params["height"])
    asked = [e.payload for e in events if e.name == "map_export_started" and e.payload.get("task") == "Saving as PDF"
             and e.payload.get("width") == width and e.payload.get("height") == height and e.payload.get("dpi")]
    written = [e for e in events if e.name == "pdf_file"]
    if not asked or not written:
        return False
    with open(written[-1].payload["path"], "rb") as f:
        data = f.read()
    box = re.search(rb"/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\]", data)
    if not data.startswith(b"%PDF") or box is None:
        return False
    x0, y0, x1, y1 = (float(v) for v in box.groups())
    dpi = float(asked[-1]["dpi"])
    return abs((x1 - x0) - width * 72 / dpi) <= SLACK and abs((y1 - y0) - height * 72 / dpi) <= SLACK
