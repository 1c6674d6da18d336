"""What Blender runs at start (`blender --python start.py`): the probe package beside this file. Its start
(probe_inapp) turns on faulthandler and the guard first."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import mcpworld_probe  # noqa: E402

mcpworld_probe.start()
