"""What QGIS runs at start (`qgis --code start.py`, exec'd without a __file__): the probe package, which
sits in the profile's python/ folder, on QGIS's sys.path. Its start (probe_inapp) turns on faulthandler and
the guard first."""
import mcpworld_probe

mcpworld_probe.start()
