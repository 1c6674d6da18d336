"""Local backend: a private Xvfb display, xfwm4, a HOME sandbox; teardown kills only what it spawned.

Isolation of processes follows the PID-snapshot idea: every process we start gets its own
session (process group) and a marker variable MCPWORLD_ENV=<id>; teardown signals the groups,
then sweeps any process still carrying the marker (daemons that escaped their group).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import tempfile
import time
import uuid
from pathlib import Path

import psutil

from mcpworld.envs.base import Environment
from mcpworld.errors import EnvironmentSetupError, PrerequisiteError

MARKER = "MCPWORLD_ENV"


def _require(binary: str) -> str:
    path = shutil.which(binary)
    if not path:
        raise PrerequisiteError(f"'{binary}' is not installed (run `make setup`)")
    return path


class LocalEnvironment(Environment):
    def __init__(self, width: int = 1280, height: int = 800, window_manager: bool = True):
        self.id = f"env-{uuid.uuid4().hex[:10]}"
        self.width, self.height = width, height
        self._wm = window_manager
        self._root = Path(tempfile.mkdtemp(prefix=f"mcpworld-{self.id}-"))
        self._home = self._root / "home"
        self._private = self._root / "private"
        self.logs_dir = self._private / "logs"
        for d in (self._home, self._private, self.logs_dir):
            d.mkdir(parents=True, exist_ok=True)
        self._procs: list[asyncio.subprocess.Process] = []
        self._log_files: list = []
        self._display: str | None = None
        self._xvfb: asyncio.subprocess.Process | None = None
        self._closed = False

    # -- properties ---------------------------------------------------------------
    @property
    def display(self) -> str:
        if self._display is None:
            raise EnvironmentSetupError("environment is not open")
        return self._display

    @property
    def home(self) -> str:
        return str(self._home)

    @property
    def env_dir(self) -> str:
        return str(self._private)

    @property
    def root(self) -> Path:
        return self._root

    def base_env(self) -> dict[str, str]:
        keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "TZ") if k in os.environ}
        return {**keep, "HOME": self.home, "DISPLAY": self._display or "", "USER": os.environ.get("USER", "root"),
                "XDG_RUNTIME_DIR": str(self._private / "xdg-runtime"), "LANG": keep.get("LANG", "C.UTF-8"),
                MARKER: self.id}

    # -- lifecycle ------------------------------------------------------------------
    async def open(self) -> None:
        xvfb = _require("Xvfb")
        (self._private / "xdg-runtime").mkdir(mode=0o700, exist_ok=True)
        read_fd, write_fd = os.pipe()
        try:
            # -displayfd: Xvfb picks a free display number itself and writes it to the pipe,
            # so parallel environments never race for a number.
            self._xvfb = await asyncio.create_subprocess_exec(
                xvfb, "-displayfd", str(write_fd), "-screen", "0", f"{self.width}x{self.height}x24",
                "-nolisten", "tcp", "-noreset", "+extension", "XTEST",
                pass_fds=(write_fd,), start_new_session=True, env={**os.environ, MARKER: self.id},
                stdout=asyncio.subprocess.DEVNULL, stderr=self._log("xvfb"))
            os.close(write_fd)
            write_fd = -1
            number = await asyncio.wait_for(asyncio.to_thread(_read_number, read_fd), timeout=15)
        except (asyncio.TimeoutError, ValueError) as e:
            await self.close()
            raise EnvironmentSetupError(f"Xvfb did not report a display: {e!r}") from None
        finally:
            if write_fd >= 0:
                os.close(write_fd)
            os.close(read_fd)
        self._procs.append(self._xvfb)
        self._display = f":{number}"
        if self._wm:
            # xfwm4 needs a session bus (xfconf); dbus-run-session gives it a private one
            await self.spawn([_require("dbus-run-session"), "--", _require("xfwm4"), "--compositor=off",
                              "--sm-client-disable"], log_name="xfwm4")

    def _log(self, name: str):
        f = open(self.logs_dir / f"{name}.log", "ab")
        self._log_files.append(f)
        return f

    async def spawn(self, argv, *, env=None, cwd=None, stdin=None, stdout=None, stderr=None, log_name=None):
        if self._closed:
            raise EnvironmentSetupError("environment is closed")
        full_env = {**self.base_env(), **(env or {})}
        if log_name:
            log = self._log(log_name)
            stdout = stdout if stdout is not None else log
            stderr = stderr if stderr is not None else log
        proc = await asyncio.create_subprocess_exec(
            *argv, env=full_env, cwd=cwd or self.home, start_new_session=True,
            stdin=stdin if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=stdout if stdout is not None else asyncio.subprocess.DEVNULL,
            stderr=stderr if stderr is not None else asyncio.subprocess.DEVNULL)
        self._procs.append(proc)
        return proc

    def alive(self, proc) -> bool:
        return proc.returncode is None and psutil.pid_exists(proc.pid)

    async def restore(self, source: Path, target: str) -> None:
        rsync = _require("rsync")
        dest = Path(target)
        dest.parent.mkdir(parents=True, exist_ok=True)
        src = f"{source}/" if source.is_dir() else str(source)
        proc = await asyncio.create_subprocess_exec(
            rsync, "-a", "--delete", src, str(dest), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await proc.communicate()
        if proc.returncode != 0:
            raise EnvironmentSetupError(f"rsync {source} -> {target} failed: {err.decode().strip()}")

    async def wait_window(self, name_regex: str, timeout: float) -> int:
        import xdo  # libxdo binding, imported late: needs libxdo3

        x = xdo.Xdo(self.display)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                found = x.search_windows(winname=name_regex.encode(), only_visible=True, require=True)
                if found:
                    return int(found[0])
                await asyncio.sleep(0.05)
        finally:
            del x
        raise EnvironmentSetupError(f"no window matching /{name_regex}/ appeared within {timeout:.0f}s")

    async def settle(self, name_regex: str, quiet: float, timeout: float) -> None:
        import re

        import xdo

        from gateway.screen import Screen

        x = xdo.Xdo(self.display)
        screen = Screen(self.display)
        pattern = re.compile(name_regex)

        def focused() -> bool:
            try:
                win = x.get_active_window()
                name = x.get_window_name(win) if win else b""
            except xdo.XdoException:  # no active window yet
                return False
            return bool(pattern.search(name.decode(errors="replace") if isinstance(name, bytes) else str(name)))

        try:
            deadline = time.monotonic() + timeout
            while not focused() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            interval = 0.05
            await screen.settle(timeout=max(0.5, deadline - time.monotonic()), interval=interval,
                                quiet=max(1, round(quiet / interval)))
        finally:
            screen.close()
            del x

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        others = [p for p in self._procs if p is not self._xvfb]
        await _terminate(others, self.id)
        if self._xvfb is not None:
            await _terminate([self._xvfb], None)
        for f in self._log_files:
            f.close()
        if self._display:
            n = self._display.lstrip(":")
            for leftover in (f"/tmp/.X{n}-lock", f"/tmp/.X11-unix/X{n}"):
                try:
                    os.unlink(leftover)
                except FileNotFoundError:
                    pass
        shutil.rmtree(self._root, ignore_errors=True)


def _read_number(fd: int) -> int:
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 64)
        if not chunk:
            break
        data += chunk
    return int(data.strip())


def _marked(env_id: str) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["pid"]):
        try:
            if p.pid != os.getpid() and p.environ().get(MARKER) == env_id:
                found.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


async def _terminate(procs, env_id: str | None, grace: float = 3.0) -> None:
    """SIGTERM the process groups (and marked stragglers), wait, then SIGKILL what is left."""
    groups = set()
    for p in procs:
        try:
            groups.add(os.getpgid(p.pid))
        except ProcessLookupError:
            pass
    def signal_all(sig):
        for g in groups:
            try:
                os.killpg(g, sig)
            except (ProcessLookupError, PermissionError):
                pass
        for sp in (_marked(env_id) if env_id else []):
            try:
                sp.send_signal(sig)
            except psutil.Error:
                pass
    signal_all(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if all(p.returncode is not None for p in procs) and not (env_id and _marked(env_id)) and not _groups_alive(groups):
            break
        await asyncio.sleep(0.05)
    else:
        signal_all(signal.SIGKILL)
    for p in procs:
        try:
            await asyncio.wait_for(p.wait(), 2)
        except asyncio.TimeoutError:
            pass


def _groups_alive(groups: set[int]) -> bool:
    for g in groups:
        try:
            os.killpg(g, 0)
            return True
        except (ProcessLookupError, PermissionError):
            continue
    return False
