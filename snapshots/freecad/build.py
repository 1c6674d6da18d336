"""Write FreeCAD's snapshot documents with FreeCAD's own Python (Debian's, headless). Run:
python snapshots/freecad/build.py

    documents/models/bracket.FCStd   a Part Design body: a 40 x 20 x 10 mm additive box with a subtractive
                                     cylinder (r 4 mm) through it, the document to open
    documents/models/spacer.FCStd    a Part Design body: an additive cylinder r 12 mm, h 6 mm

Every value is fixed, so a rebuild writes the same shapes (FCStd files carry their own save times, hence a
rebuild shows as a change in git; the content stays the same).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
FREECADCMD = "freecadcmd"  # FreeCAD's console: its Python with its modules (Part Design) on the path

SCRIPT = r'''
import os
import FreeCAD as App
out = os.environ["MCPWORLD_SNAPSHOT_OUT"]

doc = App.newDocument("bracket")
body = doc.addObject("PartDesign::Body", "Body")
box = body.newObject("PartDesign::AdditiveBox", "Box")
box.Length, box.Width, box.Height = 40, 20, 10
hole = body.newObject("PartDesign::SubtractiveCylinder", "Hole")
hole.Radius, hole.Height = 4, 10
hole.Placement = App.Placement(App.Vector(20, 10, 0), App.Rotation())
doc.recompute()
assert hole.Shape.isValid() and abs(hole.Shape.Volume - (8000 - 3.14159265 * 16 * 10)) < 1, hole.Shape.Volume
doc.saveAs(out + "/bracket.FCStd")

doc = App.newDocument("spacer")
body = doc.addObject("PartDesign::Body", "Body")
cyl = body.newObject("PartDesign::AdditiveCylinder", "Cylinder")
cyl.Radius, cyl.Height = 12, 6
doc.recompute()
doc.saveAs(out + "/spacer.FCStd")
'''


def main() -> None:
    out = HERE / "documents" / "models"
    out.mkdir(parents=True, exist_ok=True)
    for f in out.glob("*.FCStd*"):
        f.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "build_documents.py"
        script.write_text(SCRIPT)
        # freecadcmd reports a script's exception but exits 0: the files are checked instead
        subprocess.run([FREECADCMD, str(script)], check=True, timeout=300, stdout=subprocess.DEVNULL, env={**os.environ, "HOME": tmp,
                                                                                 "MCPWORLD_SNAPSHOT_OUT": str(out)})
    missing = [n for n in ("bracket.FCStd", "spacer.FCStd") if not (out / n).is_file()]
    if missing:
        raise SystemExit(f"freecadcmd did not write {', '.join(missing)}")
    print(f"wrote {', '.join(sorted(p.name for p in out.iterdir()))}")


if __name__ == "__main__":
    sys.exit(main())
