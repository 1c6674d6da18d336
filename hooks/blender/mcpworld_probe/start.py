"""What Blender runs at start (`blender --python start.py`): the probe package beside this file."""
import faulthandler
import os
import sys

faulthandler.enable(all_threads=True)  # a crash leaves every thread's Python stack in the app's log

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import mcpworld_probe  # noqa: E402

mcpworld_probe.start()
