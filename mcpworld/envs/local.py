"""Local backend: a private Xvfb display, xfwm4, a HOME sandbox; teardown kills only what it spawned.

Run by root, the app and its desktop run as the app's user and the agent's tools as the agent's user in
a sandbox (mcpworld.envs.users); HOME is shared through a group, the app's own data (its named paths)
is the app user's alone, and the display takes only clients that hold the runner's X cookie.

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

from mcpworld.build import build_env
from mcpworld.envs import LOCAL, register_backend
from mcpworld.envs import users as accounts
from mcpworld.envs.base import AGENT_ENV, Environment, write_owned
from mcpworld.envs.shell_files import ShellFiles
from mcpworld.envs.x11 import X11Desktop, seed_xfconf
from mcpworld.errors import EnvironmentSetupError, PrerequisiteError

MARKER = "MCPWORLD_ENV"
PREFIX = "mcpworld-env-"
_PR_SET_PDEATHSIG = 1


def _die_with_runner() -> None:
    """In the child before exec: get SIGKILL when the runner dies, so a killed runner leaves no desktop."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def sweep_stale(tmp: Path | None = None) -> list[Path]:
    """Kill what is left of environments whose runner is gone (killed before its teardown) and delete
    their folders. The app's own process dies with the runner; what it started need not (code-server's
    servers and extension host outlive it, and its probe would knock on a later trial's evaluator port):
    they carry the environment's marker or name its folder."""
    removed = []
    for d in Path(tmp or tempfile.gettempdir()).glob(f"{PREFIX}*"):
        try:
            pid = int((d / "runner.pid").read_text())
        except (OSError, ValueError):
            continue
        if not psutil.pid_exists(pid):
            for p in _marked("env-" + d.name[len(PREFIX):].split("-")[0], str(d)):
                try:
                    p.kill()
                except psutil.Error:
                    pass
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d)
    return removed


def _require(binary: str) -> str:
    path = shutil.which(binary)
    if not path:
        raise PrerequisiteError(f"'{binary}' is not installed (run `make setup`)")
    return path


@register_backend(LOCAL)
class LocalEnvironment(X11Desktop, Environment):
    @classmethod
    def for_app(cls, app, options) -> LocalEnvironment:
        return cls(options.width, options.height, app_build=options.app_build)

    def __init__(self, width: int = 1280, height: int = 800, window_manager: bool = True,
                 app_build: Path | None = None):
        self.app_build = Path(app_build).resolve() if app_build else None
        self.id = f"env-{uuid.uuid4().hex[:10]}"
        self.width, self.height = width, height
        self._wm = window_manager
        sweep_stale()
        self._root = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{self.id[4:]}-"))
        (self._root / "runner.pid").write_text(str(os.getpid()))
        self._home = self._root / "home"
        self._private = self._root / "private"
        self.logs_dir = self._private / "logs"
        self._agent_tmp = self._root / "agent-tmp"  # the agent's /tmp in its sandbox
        # the app's TMPDIR: what its processes leave there (sockets, caches) goes with the environment
        self._app_tmp = self._private / "tmp"
        for d in (self._home, self._private, self.logs_dir, self._agent_tmp, self._app_tmp):
            d.mkdir(parents=True, exist_ok=True)
        self._users = accounts.users()
        self.isolation = "users+sandbox" if self._users else "none"
        if self._users:
            # the root and private folders: passable, not listable; HOME: the app's and the agent's group's
            os.chmod(self._root, 0o711)
            os.chmod(self._private, 0o711)
            os.chmod(self.logs_dir, 0o700)
            os.chown(self._home, self._users.app_uid, self._users.share_gid)
            os.chmod(self._home, 0o2770)
            os.chown(self._agent_tmp, self._users.agent_uid, self._users.agent_gid)
            os.chmod(self._agent_tmp, 0o700)
            os.chown(self._app_tmp, self._users.app_uid, self._users.app_gid)
            os.chmod(self._app_tmp, 0o700)
        self._xauthority = accounts.runner_xauthority(self._users)
        self._agent_files = ShellFiles(self._run_as_agent)
        self._procs: list[asyncio.subprocess.Process] = []
        self._log_files: list = []
        self._display: str | None = None
        self._bus: str | None = None
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
        if self.app_build:
            keep.update(build_env(self.app_build, keep.get("PATH", "/usr/bin:/bin")))
        return {**keep, "HOME": self.home, "DISPLAY": self._display or "", "USER": os.environ.get("USER", "root"),
                "XAUTHORITY": str(self._xauthority),
                "XDG_RUNTIME_DIR": str(self._private / "xdg-runtime"), "LANG": keep.get("LANG", "C.UTF-8"),
                "DBUS_SESSION_BUS_ADDRESS": self._bus or "", "NO_AT_BRIDGE": "1", MARKER: self.id}

    # -- lifecycle ------------------------------------------------------------------
    async def open(self) -> None:
        runtime = self._private / "xdg-runtime"
        runtime.mkdir(mode=0o700, exist_ok=True)
        if self._users:
            os.chown(runtime, self._users.app_uid, self._users.app_gid)
        try:
            # -displayfd: Xvfb picks a free display number itself and writes it to the pipe,
            # so parallel environments never race for a number.
            self._xvfb, number = await self._start_reporting(
                [_require("Xvfb"), "-displayfd", "{fd}", "-screen", "0", f"{self.width}x{self.height}x24",
                 "-nolisten", "tcp", "-noreset", "+extension", "XTEST", "-auth", str(self._xauthority)], "xvfb",
                as_app=False)
            self._display = f":{int(number)}"
            if self._wm:
                # A session bus of the environment's own, a direct child of the runner (so it dies with
                # it), shared by the window manager and the apps.
                _, self._bus = await self._start_reporting(
                    [_require("dbus-daemon"), "--session", "--nofork", "--print-address={fd}",
                     f"--address=unix:dir={runtime}"], "dbus")  # not the default's /tmp
                seed_xfconf(self._home, self._users.app_uid if self._users else None,
                            self._users.share_gid if self._users else None)
                await self.spawn([_require("xfwm4"), "--compositor=off", "--sm-client-disable"], log_name="xfwm4")
                await self.wait_window_manager()
        except (asyncio.TimeoutError, ValueError, OSError) as e:
            await self.close()
            raise EnvironmentSetupError(f"the desktop did not start: {e!r}") from None

    async def _start_reporting(self, argv: list[str], name: str, as_app: bool = True) -> tuple[asyncio.subprocess.Process, str]:
        """Start a daemon that reports where it listens on a pipe ({fd} in argv); that first line."""
        read_fd, write_fd = os.pipe()
        try:
            proc = await asyncio.create_subprocess_exec(
                *[a.replace("{fd}", str(write_fd)) for a in argv], pass_fds=(write_fd,), start_new_session=True,
                env={**os.environ, **self.base_env(), "TMPDIR": str(self._app_tmp)}, preexec_fn=_die_with_runner,
                stdout=asyncio.subprocess.DEVNULL, stderr=self._log(name), **(self._as_app() if as_app else {}))
            self._procs.append(proc)
            os.close(write_fd)
            write_fd = -1
            line = await asyncio.wait_for(asyncio.to_thread(_read_line, read_fd), timeout=15)
        finally:
            if write_fd >= 0:
                os.close(write_fd)
            os.close(read_fd)
        if not line:
            raise ValueError(f"{name} exited without reporting (see its log)")
        return proc, line

    def _log(self, name: str):
        f = open(self.logs_dir / f"{name}.log", "ab")
        self._log_files.append(f)
        return f

    async def spawn(self, argv, *, env=None, cwd=None, stdin=None, stdout=None, stderr=None, log_name=None,
                    privileged=False, agent=False, etc=None):
        if self._closed:
            raise EnvironmentSetupError("environment is closed")
        # the agent's sandbox has a /tmp of its own; everything else uses the environment's
        full_env = {**self.base_env(), **(AGENT_ENV if agent else {"TMPDIR": str(self._app_tmp)}), **(env or {})}
        if log_name:
            log = self._log(log_name)
            stdout = stdout if stdout is not None else log
            stderr = stderr if stderr is not None else log
        who: dict = {}
        if self._users and agent:
            argv = accounts.sandbox(list(argv), self._users, self.home, str(self._agent_tmp), self.display,
                                    str(self._xauthority))
        elif not privileged and self._users and etc:
            argv, who = accounts.with_etc(list(argv), self._users, etc), {"umask": 0o007}
        elif not privileged:
            who = self._as_app()
        proc = await asyncio.create_subprocess_exec(
            *argv, env=full_env, cwd=cwd or self.home, start_new_session=True, preexec_fn=_die_with_runner,
            stdin=stdin if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=stdout if stdout is not None else asyncio.subprocess.DEVNULL,
            stderr=stderr if stderr is not None else asyncio.subprocess.DEVNULL, **who)
        self._procs.append(proc)
        return proc

    def agent_terminal_prefix(self) -> list[str]:
        if not self._users:
            return []  # started by an ordinary user: one user for everything (the result says isolation: none)
        return accounts.sandbox([], self._users, self.home, str(self._agent_tmp), self.display,
                                str(self._xauthority), terminal=True)

    @property
    def agent_files(self):
        return self._agent_files if self._users else self

    async def _run_as_agent(self, argv: list[str], input: bytes | None = None) -> tuple[int, bytes, bytes]:
        proc = await self.spawn(argv, stdin=asyncio.subprocess.PIPE if input is not None else None,
                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, agent=True)
        out, err = await proc.communicate(input)
        return proc.returncode, out, err

    async def hand_over(self, private: list[str]) -> None:
        if self._users:
            await asyncio.to_thread(accounts.hand_over, self._home, [Path(p) for p in private], self._users)

    async def write_private(self, name: str, text: str, privileged: bool = False) -> str:
        """A one-time file only its reader can read: root's (the Frida bridge) in env_dir, the app's (its probe)
        in a folder of the app user's there, which the probe may delete it from."""
        if privileged or not self._users:
            return await super().write_private(name, text, privileged)
        path = Path(await self.app_private_path(name))
        write_owned(path, text, (self._users.app_uid, self._users.app_gid))
        return str(path)

    async def app_private_path(self, name: str) -> str:
        if not self._users:
            return await super().app_private_path(name)
        folder = self._private / "app"
        if not folder.exists():
            folder.mkdir(mode=0o700)
            os.chown(folder, self._users.app_uid, self._users.app_gid)
        return str(folder / name)

    def _as_app(self) -> dict:
        """Popen's arguments that run a process as the app's user, its files shared with the agent's group."""
        u = self._users
        return {"user": u.app_uid, "group": u.share_gid, "extra_groups": [u.app_gid, u.share_gid], "umask": 0o007} if u else {}

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

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.close_drawing()
        others = [p for p in self._procs if p is not self._xvfb]
        # No grace period: the verdict is on disk and the next trial restores its files from the snapshot,
        # so an app's orderly shutdown (Anki's takes about a second) would buy nothing.
        await _terminate(others, self.id, str(self._root), grace=0.0)
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


def _read_line(fd: int) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 256)
        if not chunk:
            break
        data += chunk
    return data.decode().strip()


def _marked(env_id: str, root: str) -> list[psutil.Process]:
    """Processes carrying the environment's marker variable or naming its folder (daemons that
    cleared their environment, e.g. a D-Bus session daemon, still point into it)."""
    found = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            if p.pid == os.getpid():
                continue
            if root in " ".join(p.info["cmdline"] or []) or p.environ().get(MARKER) == env_id:
                found.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def _tree(procs) -> list[psutil.Process]:
    """The processes and all their descendants, taken before anything is signalled."""
    out = []
    for p in procs:
        try:
            parent = psutil.Process(p.pid)
            out.append(parent)
            out.extend(parent.children(recursive=True))
        except psutil.NoSuchProcess:
            continue
    return out


async def _terminate(procs, env_id: str | None, root: str = "", grace: float = 3.0) -> None:
    """SIGTERM every process of ours (tree snapshot, process groups, marked stragglers),
    wait for them, then SIGKILL what is left; with no grace, SIGKILL at once."""
    victims = {p.pid: p for p in _tree(procs) + (_marked(env_id, root) if env_id else [])}
    groups = set()
    for pid in victims:
        try:
            groups.add(os.getpgid(pid))
        except ProcessLookupError:
            pass
    groups.discard(os.getpgid(0))

    def signal_all(sig):
        for g in groups:
            try:
                os.killpg(g, sig)
            except (ProcessLookupError, PermissionError):
                pass
        for p in victims.values():
            try:
                p.send_signal(sig)
            except psutil.Error:
                pass

    if grace > 0:
        signal_all(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not any(_running(p) for p in victims.values()) and not _groups_alive(groups):
            break
        await asyncio.sleep(0.05)
    else:
        signal_all(signal.SIGKILL)
    for p in procs:
        try:
            await asyncio.wait_for(p.wait(), 2)
        except asyncio.TimeoutError:
            pass


def _running(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _groups_alive(groups: set[int]) -> bool:
    for g in groups:
        try:
            os.killpg(g, 0)
            return True
        except (ProcessLookupError, PermissionError):
            continue
    return False
