"""The start of an in-app Python probe that runs inside an app's own embedded Python (Blender, FreeCAD, QGIS),
the same for each: a new app gets the guard by calling `start` first.

In order: faulthandler on (a crash leaves every thread's Python stack in the app's log); mcpworld's
site-packages put on the path (the client needs `websockets`, which the app's Python may lack); the one-time
run config read and its variable dropped (outside mcpworld: nothing more happens); the guard
(`probe_guard`: no source the agent types compiles in the process from here on, and every refusal is a
`code_run` event); the client. Copied into the probe's package as `probe_inapp.py`, beside
`probe_client.py` and `probe_guard.py`.
"""

from __future__ import annotations

import faulthandler
import os
import subprocess
import sys


def _faulthandler() -> None:
    try:
        faulthandler.enable(file=sys.__stderr__, all_threads=True)
    except (AttributeError, ValueError, OSError):  # an app whose stderr is no file
        pass


def _venv_site() -> str | None:
    """mcpworld's own site-packages (MCPWORLD_PYTHON's), appended to the path: where `websockets` is."""
    python = os.environ.pop("MCPWORLD_PYTHON", "")
    if not python:
        return None
    out = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, timeout=30)
    site = out.stdout.strip()
    if site and site not in sys.path:
        sys.path.append(site)
    return site or None


def start(probe_dir: str, app_roots: list[str] = (), **guard_options):
    """(run config, client), or None outside mcpworld. `app_roots`: where the app's own Python code is
    installed; `guard_options`: the guard's surfaces, trusted generators and rule for code from C."""
    _faulthandler()
    site = _venv_site()
    from . import probe_client, probe_guard  # the client needs websockets: after the site is on the path

    cfg = probe_client.read_config()
    os.environ.pop(probe_client.CONFIG_ENV, None)
    if cfg is None:
        return None
    held: list = []  # code refused before the client exists (nothing the agent did: it is not running yet)
    client = None

    def code_run(surface: str, code: str) -> None:
        event = {"surface": surface, "code": code, "blocked": True, "channel": "gui"}
        if client is None:
            held.append(event)
            return
        client.emit("code_run", event)
        client.flush(5.0)  # the evaluator has it before the refusal reaches the agent

    probe_guard.install(code_run, [probe_dir, *app_roots, *([site] if site else [])], **guard_options)
    client = probe_client.ProbeClient.from_config(cfg)
    for event in held:
        client.emit("code_run", event)
    return cfg, client
