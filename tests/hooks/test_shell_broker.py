"""The shell broker (probe_runtime/shell_broker.py) with a real pty: a shell the app's user asks for runs as
another user (the agent) on that pty as its controlling terminal, so job control, ^C and the exit status work
as in any terminal; a client of another user than the app's is refused."""

import json
import os
import pty
import select
import subprocess
import sys
import tempfile
import time

import pytest

from mcpworld import paths

APP_UID, AGENT_UID = 65534, 65533  # the app's user and the agent here (no account needed)


@pytest.fixture
def broker():
    folder = tempfile.mkdtemp(prefix="mcpworld-broker-")
    os.chown(folder, APP_UID, APP_UID)
    os.chmod(folder, 0o700)
    socket_path = f"{folder}/shell-broker.sock"
    code_root = str(paths.RUNTIME_DIR.parent)
    sandbox = [f"--reuid={AGENT_UID}", f"--regid={AGENT_UID}", "--clear-groups", "--no-new-privs"]
    proc = subprocess.Popen([sys.executable, "-m", "probe_runtime.shell_broker", "--socket", socket_path,
                             "--sandbox", json.dumps(["setpriv", *sandbox])],
                            cwd=code_root, env={**os.environ, "PYTHONPATH": code_root, "HOME": "/tmp"},
                            stdout=subprocess.PIPE)
    assert proc.stdout.readline() == b"listening\n"
    yield socket_path
    proc.kill()
    proc.wait(10)


def terminal(socket_path: str, uid: int, shell: list[str]) -> tuple[int, int]:
    """A pty whose session leader is the broker's client, run as `uid`, as a terminal emulator starts it."""
    pid, fd = pty.fork()
    if pid == 0:
        os.setgid(uid)
        os.setuid(uid)
        os.chdir("/tmp")
        script = str(paths.RUNTIME_DIR / "shell_broker.py")
        os.execv(sys.executable, [sys.executable, script, "--connect", "--socket", socket_path, "--", *shell])
    return pid, fd


def read(fd: int, seconds: float) -> str:
    out, end = b"", time.time() + seconds
    while time.time() < end:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
    return out.decode(errors="replace")


def test_the_shell_runs_as_the_agent_on_the_terminal(broker):
    pid, fd = terminal(broker, APP_UID, ["bash", "--norc", "--noprofile", "-i"])
    read(fd, 1.5)
    os.write(fd, b"echo uid=$(id -u); tty; pwd\n")
    out = read(fd, 2)
    assert f"uid={AGENT_UID}" in out and "/dev/pts/" in out and "/tmp" in out, out
    os.write(fd, b"sleep 30\n")
    time.sleep(0.5)
    os.write(fd, b"\x03")  # ^C: the foreground job, not the shell, ends
    os.write(fd, b"echo after=$?\n")
    assert "after=130" in read(fd, 3)
    os.write(fd, b"exit 3\n")
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 3


def test_only_the_apps_user_is_served(broker):
    pid, fd = terminal(broker, AGENT_UID, ["sh", "-c", "id"])
    out = read(fd, 2)
    _, status = os.waitpid(pid, 0)
    # the socket is the app user's, mode 0600: another user cannot even connect
    assert os.waitstatus_to_exitcode(status) == 126 and "no shell" in out and "uid=" not in out, out
