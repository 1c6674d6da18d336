"""The start of an in-app Python probe that runs inside an app's own embedded Python (Blender, FreeCAD, QGIS),
the same for each: a new app gets the guard by calling `start` first.

In order: faulthandler on (a crash leaves every thread's Python stack in the app's log); mcpworld's
site-packages put on the path (the client needs `websockets`, which the app's Python may lack); the one-time
run config read and its variable dropped (outside mcpworld: nothing more happens); the guard
(`probe_guard`: no source the agent types compiles in the process from here on, and every refusal is a
`code_run` event); the client. Copied into the probe's package as `probe_inapp.py`, beside
`probe_client.py` and `probe_guard.py`. Once the client is up, the process starts no program (`close_programs`).

No new program from the app's process: a seccomp filter, on every thread of the process and inherited by each
child, fails execve and execveat with EPERM. The app can then start no program of the agent's choosing (a QGIS
shell layer action, a Blender external editor, a FreeCAD external tool: from C++ or Python, with a command line
from a preference the agent set). Nothing is recorded: the surface is closed, and the app sees a program that
could not start. Linux x86_64 and aarch64.
"""

from __future__ import annotations

import ctypes
import errno
import faulthandler
import os
import platform
import struct
import subprocess
import sys

PR_SET_NO_NEW_PRIVS = 38
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1
RET_ALLOW = 0x7FFF0000
RET_EPERM = 0x00050000 | errno.EPERM
LD_ABS_W, JEQ_K, RET_K = 0x20, 0x15, 0x06
# machine -> (audit arch, seccomp's own syscall number, the execve family)
ARCHES = {"x86_64": (0xC000003E, 317, (59, 322)), "aarch64": (0xC00000B7, 277, (221, 281))}


def _program(arch: int, calls: tuple[int, ...]) -> bytes:
    """The BPF program: another architecture's calls pass (none here run them); the execve family fails."""
    ops = [(LD_ABS_W, 0, 0, 4), (JEQ_K, 0, len(calls) + 1, arch), (LD_ABS_W, 0, 0, 0)]
    for i, nr in enumerate(calls):
        ops.append((JEQ_K, len(calls) - i, 0, nr))
    ops += [(RET_K, 0, 0, RET_ALLOW), (RET_K, 0, 0, RET_EPERM)]
    return b"".join(struct.pack("HBBI", *op) for op in ops)


def close_programs() -> str | None:
    """No new program from this process from here on (the seccomp filter above); None when it is on, else why not."""
    machine = platform.machine()
    if machine not in ARCHES:
        return f"no filter for {machine}"
    arch, seccomp_nr, calls = ARCHES[machine]
    libc = ctypes.CDLL(None, use_errno=True)
    code = _program(arch, calls)
    buf = ctypes.create_string_buffer(code, len(code))

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = Prog(len(code) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"no_new_privs: {os.strerror(ctypes.get_errno())}"
    if libc.syscall(seccomp_nr, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, ctypes.byref(prog)) != 0:
        return f"seccomp: {os.strerror(ctypes.get_errno())}"
    return None


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
    why = close_programs()
    if why is not None:  # a trial with this surface open does not start: the runner stops at this event
        client.emit("probe_error", {"where": "close_programs", "trace": why})
        client.flush(5.0)
        raise RuntimeError(f"mcpworld: the app could still start programs ({why})")
    return cfg, client
