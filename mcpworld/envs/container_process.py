"""A process started inside a container with the Docker SDK's exec API, shaped like asyncio.subprocess.Process
for what the trial and the tools use: pid (in the container's PID namespace), returncode, wait(),
communicate(), stdin/stdout/stderr streams, terminate() and kill().

The exec's socket carries stdout and stderr multiplexed (8-byte frame headers when there is no TTY);
a reader task splits them into two StreamReaders, or appends both to a log file.
"""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path


def container_pid(host_pid: int) -> int | None:
    """The PID a host process has in its innermost PID namespace (the container's), from /proc's NSpid."""
    try:
        for line in Path(f"/proc/{host_pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    except (OSError, ValueError):
        return None
    return None


class ContainerProcess:
    def __init__(self, api, exec_id: str, container_id: str) -> None:
        self._api, self.exec_id, self._container = api, exec_id, container_id
        self.pid: int | None = None
        self.returncode: int | None = None
        self.stdin: asyncio.StreamWriter | None = None
        self.stdout: asyncio.StreamReader | None = None
        self.stderr: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pump: asyncio.Task | None = None
        self._done = asyncio.Event()
        self._raw = None  # keeps the SDK's socket object alive

    @classmethod
    async def start(cls, api, container_id: str, argv: list[str], *, user: str, env: dict[str, str], cwd: str | None,
                    stdin: bool, pipe_output: bool, log_path: Path | None) -> ContainerProcess:
        exec_id = (await asyncio.to_thread(
            api.exec_create, container_id, argv, stdout=True, stderr=True, stdin=stdin, tty=False,
            environment=env, workdir=cwd, user=user))["Id"]
        proc = cls(api, exec_id, container_id)
        sock = await asyncio.to_thread(api.exec_start, exec_id, socket=True)
        proc._raw = sock
        raw = getattr(sock, "_sock", sock)
        reader, writer = await asyncio.open_connection(sock=raw)
        proc._writer = writer
        if stdin:
            proc.stdin = writer
        else:
            writer.write_eof()
        if pipe_output:
            proc.stdout, proc.stderr = asyncio.StreamReader(), asyncio.StreamReader()
        proc._pump = asyncio.ensure_future(proc._demux(reader, log_path))
        proc.pid = await proc._find_pid()
        return proc

    async def _find_pid(self) -> int | None:
        for _ in range(100):
            try:
                info = await asyncio.to_thread(self._api.exec_inspect, self.exec_id)
            except Exception:
                return None
            if info.get("Pid"):
                return container_pid(info["Pid"])
            if not info.get("Running") and info.get("ExitCode") is not None:
                return None
            await asyncio.sleep(0.01)
        return None

    async def _demux(self, reader: asyncio.StreamReader, log_path: Path | None) -> None:
        log = open(log_path, "ab") if log_path else None
        # an event loop that closes with this pump still reading (a test's end) closes it: nothing may be
        # awaited then, or the coroutine "ignores GeneratorExit"
        closed_under = False
        try:
            while True:
                try:
                    header = await reader.readexactly(8)
                except (asyncio.IncompleteReadError, ConnectionError):
                    break
                kind, size = struct.unpack(">BxxxL", header)
                try:
                    data = await reader.readexactly(size)
                except (asyncio.IncompleteReadError, ConnectionError):
                    break
                if log:
                    log.write(data)
                    log.flush()
                target = self.stderr if kind == 2 else self.stdout
                if target is not None:
                    target.feed_data(data)
        except (GeneratorExit, asyncio.CancelledError):
            closed_under = True
            raise
        finally:
            for stream in (self.stdout, self.stderr):
                if stream is not None:
                    stream.feed_eof()
            if log:
                log.close()
            if closed_under:
                self.returncode = -1 if self.returncode is None else self.returncode
            else:
                await self._wait_exit_code()
            self._writer.close()
            self._done.set()

    async def _wait_exit_code(self) -> None:
        """The output ends when the process does; its exit code may take a moment to show."""
        for _ in range(200):
            try:
                info = await asyncio.to_thread(self._api.exec_inspect, self.exec_id)
            except Exception:  # the container is gone (teardown): so is the process
                info = {"Running": False, "ExitCode": -9}
            if not info.get("Running"):
                self.returncode = info.get("ExitCode")
                if self.returncode is None:
                    self.returncode = -1
                return
            await asyncio.sleep(0.02)
        self.returncode = -1  # still running with its output closed: treat as gone

    async def stop_reading(self) -> None:
        """Stop reading the output of a process left running (its container goes away in the background):
        the pump would otherwise stay pending past the event loop's end."""
        if self._pump is not None and not self._pump.done():
            self._pump.cancel()
            await asyncio.gather(self._pump, return_exceptions=True)

    async def wait(self) -> int:
        await self._done.wait()
        return self.returncode

    async def communicate(self, input: bytes | None = None) -> tuple[bytes, bytes]:
        if input is not None and self.stdin is not None:
            self.stdin.write(input)
            await self.stdin.drain()
        if self.stdin is not None and not self.stdin.is_closing():
            self.stdin.write_eof()
        out, err = await asyncio.gather(
            self.stdout.read() if self.stdout else asyncio.sleep(0, b""),
            self.stderr.read() if self.stderr else asyncio.sleep(0, b""))
        await self.wait()
        return out, err

    def send_signal(self, sig: str) -> None:
        """Signal the process from inside the container, as root (fire and forget, like os.kill)."""
        if self.pid is None or self.returncode is not None:
            return
        loop = asyncio.get_running_loop()
        loop.run_in_executor(None, self._signal_now, sig)

    def _signal_now(self, sig: str, group: bool = False) -> None:
        """Exec'd processes lead their own session and group (runc makes them), so -pid is the group."""
        target = f"-{self.pid}" if group else str(self.pid)
        try:
            eid = self._api.exec_create(self._container, ["kill", f"-{sig}", "--", target], user="root")["Id"]
            self._api.exec_start(eid)
        except Exception:  # the container is gone: so is the process
            pass

    async def kill_group(self) -> None:
        """SIGKILL the process's group (a shell and what it started) and wait for it to end."""
        if self.pid is not None and self.returncode is None:
            await asyncio.to_thread(self._signal_now, "KILL", True)
            await asyncio.to_thread(self._signal_now, "KILL", False)
        await self.wait()

    def terminate(self) -> None:
        self.send_signal("TERM")

    def kill(self) -> None:
        self.send_signal("KILL")
