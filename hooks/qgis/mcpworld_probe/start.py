"""What QGIS runs at start (`qgis --code start.py`, exec'd without a __file__): the probe package, which
sits in the profile's python/ folder, on QGIS's sys.path."""
import faulthandler

faulthandler.enable(all_threads=True)  # a crash leaves every thread's Python stack in the app's log

import mcpworld_probe  # noqa: E402

mcpworld_probe.start()
