"""Task 72: QGIS exported the map to the asked PDF at the asked size in pixels. A PDF page has no pixels: QGIS
sizes it as pixels x 72 / dpi points, so the page is read against the size and resolution QGIS's own export
reported (its dialog or the bridge, carried by `map_export_started`), and that size must be the asked one. The
page is the one the final state read from the file (`files`, the work folders' files as they are opened), so the
check judges what the file holds at the end, and a recorded trial can be judged again without it."""

SLACK = 1.5  # points: QGIS rounds the page size


def pdf_has_the_asked_shape(events, state, params) -> bool:
    width, height = int(params["width"]), int(params["height"])
    asked = [e.payload for e in events if e.name == "map_export_started" and e.payload.get("task") == "Saving as PDF"
             and e.payload.get("width") == width and e.payload.get("height") == height and e.payload.get("dpi")]
    path = str(params["savepath"]).removeprefix("~/")  # the asked file, by its path under the home as `files` has it
    pdf = next((f.get("pdf") for f in (state or {}).get("files", []) if f.get("path") == path), None)
    if not asked or not pdf or pdf.get("pages") != 1:
        return False
    dpi = float(asked[-1]["dpi"])
    return (abs(float(pdf["width"]) - width * 72 / dpi) <= SLACK
            and abs(float(pdf["height"]) - height * 72 / dpi) <= SLACK)
