"""What FreeCAD runs at start (`freecad .../start.py`, once its main window is up). FreeCAD runs the file
twice (imported under its own name, then as __main__): the probe package starts once per process. Its start
(probe_inapp) turns on faulthandler and the guard first."""
import os
import sys

_root = os.path.dirname(os.environ.get("MCPWORLD_PROBE_DIR", "").rstrip("/"))
if _root and _root not in sys.path:
    sys.path.insert(0, _root)

import mcpworld_probe  # noqa: E402

mcpworld_probe.start()
