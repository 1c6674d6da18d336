"""The interface every environment backend (local, docker) implements."""

from __future__ import annotations

import abc
import asyncio
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from mcpworld.errors import EnvironmentSetupError


@dataclass(frozen=True)
class ExecResult:
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    timed_out: bool = False


def write_owned(path: Path, text: str, owner: tuple[int, int] | None = None) -> None:
    """Write a file readable by its owner alone (uid, gid; default: ours), whole or not at all."""
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    if owner is not None:
        os.chown(tmp, *owner)
    os.replace(tmp, path)


# what the agent's processes (its bash, a terminal's shell) get besides the environment's variables: git works in
# the shared HOME, whose repositories the app's user owns (git would call them of dubious ownership)
AGENT_ENV = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "*"}


class Environment(abc.ABC):
    """One isolated desktop: a display, a window manager, a HOME sandbox and the processes in it."""

    id: str
    backend: str = ""  # its registered name (mcpworld.envs.register_backend)
    width: int = 1280
    height: int = 800

    @property
    @abc.abstractmethod
    def display(self) -> str:
        """The X display string the computer tool drives, e.g. ':7'."""

    @property
    @abc.abstractmethod
    def home(self) -> str:
        """HOME inside the environment (the agent's and the app's)."""

    @property
    @abc.abstractmethod
    def env_dir(self) -> str:
        """A private folder for mcpworld's own files (run config, logs), outside HOME."""

    # Where things are, seen from the host (the runner, MCP servers, state queries) and from inside.
    evaluator_host: str = "127.0.0.1"   # the address the evaluator listens on for this environment's probes
    bind_host: str = "127.0.0.1"        # the address in-app servers (Anki's bridge) listen on
    view_url: str | None = None         # a noVNC page showing the desktop live, where there is one
    isolation: str = "none"             # how the agent's tools are kept from the app and the records (README: Threat model)

    @property
    def app_host(self) -> str:
        """The address at which the host reaches the app's ports."""
        return "127.0.0.1"

    def repo_path(self, host_path: Path) -> str:
        """Where the environment sees a file or folder of the repository that the app declares (its
        hooks, its snapshots, the probe runtime): the same path locally, a read-only mount in a container."""
        return str(host_path)

    @property
    def python(self) -> str:
        """The Python that runs mcpworld's parts inside the environment (the Frida bridge)."""
        return sys.executable

    def host_path(self, path: str) -> str:
        """Where a path inside the environment is on the host (for file watches and state queries)."""
        return path

    def host_env(self) -> dict[str, str]:
        """The variables for processes of the environment's that run on the host (MCP servers)."""
        return self.base_env()

    async def provide(self, source: Path) -> str:
        """Make a host file (a task's Frida script) readable by the environment's privileged parts; its path there."""
        return str(source)

    async def write_private(self, name: str, text: str, privileged: bool = False) -> str:
        """Write a file in env_dir that only its owner can read (a one-time run config); its path."""
        path = Path(self.env_dir) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        write_owned(path, text)
        return str(path)

    async def app_private_path(self, name: str) -> str:
        """A path in a folder that is the app user's alone (where a probe relay's socket goes)."""
        return str(Path(self.env_dir) / name)

    async def hand_over(self, private: list[str]) -> None:
        """After the reset: HOME to the app's user, shared with the agent's, but `private` (the app's own data)
        the app user's alone. Where there are no separate users, nothing to do."""

    async def end_runtime(self, proc, timeout: float) -> None:
        """End a runtime process that stops on `stop` from its stdin (after sending what it holds: the relay's
        events, the port gate's counts); its group is killed if it has not within `timeout` s."""
        if proc.returncode is not None:
            return
        try:
            proc.stdin.write(b"stop\n")
            await proc.stdin.drain()
            await asyncio.wait_for(proc.wait(), timeout)
        except (ConnectionError, asyncio.TimeoutError):
            await self.kill_group(proc)

    async def kill_group(self, proc) -> None:
        """SIGKILL a spawned process's group (a shell and what it started) and reap it."""
        if proc.returncode is None:
            try:
                os.killpg(os.getpgid(proc.pid), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        await proc.wait()

    @abc.abstractmethod
    async def open(self) -> None:
        """Start the display and the window manager."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Kill every process this environment spawned, free the display, delete its folders."""

    @abc.abstractmethod
    async def restore(self, source: Path, target: str) -> None:
        """Make `target` an exact copy of `source` (rsync -a --delete semantics)."""

    @abc.abstractmethod
    async def spawn(self, argv: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None,
                    stdin: int | None = None, stdout: int | None = None, stderr: int | None = None,
                    log_name: str | None = None, privileged: bool = False,
                    agent: bool = False, etc: list[tuple[str, str]] | None = None) -> asyncio.subprocess.Process:
        """Start a process inside the environment (tracked, killed on close): as the app's user, as root
        (`privileged`: the Frida bridge), or as the agent's user in its sandbox (`agent`: the bash tool).
        `etc`: (file, path under /etc) the app's process sees (its images have them in place)."""

    async def spawn_runtime(self, module: str, args: list[str], *, env: dict[str, str] | None = None,
                            log_name: str, stdin: int | None = None, stdout: int | None = None):
        """A module of the probe runtime (`probe_runtime.<module>`: the relay, the Frida bridge, the shell
        broker) as root beside the app, with the runtime importable where the environment sees it."""
        from mcpworld import paths

        code_root = os.path.dirname(self.repo_path(paths.RUNTIME_DIR))
        return await self.spawn([self.python, "-m", f"probe_runtime.{module}", *args],
                                env={**(env or {}), "PYTHONPATH": code_root}, cwd=code_root, log_name=log_name,
                                privileged=True, stdin=stdin, stdout=stdout)

    @abc.abstractmethod
    def agent_terminal_prefix(self) -> list[str]:
        """An argv prefix, run as root inside the environment, that runs the rest as the agent in its sandbox
        (what its bash gets) with the terminal's pty as it is: the shell broker's (`[launch] shells_as_agent`)."""

    @abc.abstractmethod
    def base_env(self) -> dict[str, str]:
        """The variables every process in the environment gets (HOME, DISPLAY, ...)."""

    async def exec(self, argv: list[str], timeout: float = 60.0, env: dict[str, str] | None = None) -> ExecResult:
        proc = await self.spawn(argv, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except asyncio.TimeoutError:
            proc.kill()
            out, err = await proc.communicate()
            return ExecResult(None, out.decode(errors="replace"), err.decode(errors="replace"), timed_out=True)
        return ExecResult(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"))

    @property
    def agent_files(self):
        """The edit tool's file access, with the agent user's rights: read_text, write_text, make_dir,
        path_kind, list_dir (ShellFiles where the agent is another user; these methods where it is not)."""
        return self

    # File access for the reset (the runner's, on the app's behalf). The local backend reads the host
    # filesystem directly; container backends override these.
    async def read_text(self, path: str) -> str:
        return Path(path).read_text()

    async def write_text(self, path: str, text: str) -> None:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    async def make_dir(self, path: str) -> None:
        Path(path).mkdir(parents=True, exist_ok=True)

    async def path_kind(self, path: str) -> str | None:
        p = Path(path)
        return "dir" if p.is_dir() else "file" if p.exists() else None

    async def list_dir(self, path: str, depth: int = 2) -> list[str]:
        root = Path(path)
        out = []
        for p in sorted(root.rglob("*")):
            rel = p.relative_to(root)
            if len(rel.parts) <= depth and not any(part.startswith(".") for part in rel.parts):
                out.append(str(p) + ("/" if p.is_dir() else ""))
        return out

    @abc.abstractmethod
    async def wait_window(self, name_regex: str, timeout: float) -> int:
        """Wait until a visible top-level window whose name matches is mapped; its id."""

    async def wait_port(self, port: int, timeout: float) -> None:
        """Wait until something in the environment accepts TCP connections on this port (at app_host)."""
        from gateway.net import wait_listening

        if not await wait_listening(self.app_host, port, timeout):
            raise EnvironmentSetupError(f"nothing listens on port {port} after {timeout:.0f}s")

    @abc.abstractmethod
    def active_window_name(self) -> str | None:
        """The name of the window that has the keyboard focus, or None."""

    @abc.abstractmethod
    async def wait_focus(self, name_regex: str, timeout: float) -> str:
        """Wait until a window whose name matches has the focus; its name."""

    async def wait_window(self, name_regex: str, timeout: float) -> None:
        """Until a window whose name matches has the focus and is drawn (a dialog paints after it takes
        the focus), then the screen is still for 0.3 s: what a person waits for before typing into it."""
        await self.wait_focus(name_regex, timeout)
        await self.settle(name_regex, quiet=0.3, timeout=5.0, paint_timeout=timeout)

    def drawing(self):
        """A watch on what the display draws (gateway.damage.DamageWatch), or None if it has none."""
        return None

    def close_drawing(self) -> None:
        """Stop watching what the display draws (drawing() opens a new watch)."""

    @abc.abstractmethod
    async def settle(self, name_regex: str, quiet: float, timeout: float, paint_timeout: float = 0.0) -> None:
        """Wait until a window whose name matches has the focus, (up to paint_timeout) until the focused
        window holds more than one colour, then until the screen is still."""

    @abc.abstractmethod
    def alive(self, proc: asyncio.subprocess.Process) -> bool:
        ...

    async def __aenter__(self) -> Environment:
        await self.open()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()
