"""The shell broker: a shell the app starts for its terminal (an integrated terminal, its tasks) runs
as the agent, in the agent's sandbox, not as the app's user beside the app's processes and private files.

The app's terminal code starts `shell_broker.py --connect SOCKET -- SHELL ARGS...` where it would start the
shell (as the app's user, on the terminal's pty). That client gives up the pty as its controlling terminal
and hands it (fds 0-2, SCM_RIGHTS) with the shell's argv, folder and terminal variables to this broker, a
root process beside the app. The broker accepts only the app's user (SO_PEERCRED) and starts the shell under
the sandbox prefix the environment gave it (`--sandbox`: the same user, namespaces and mounts as the agent's
bash), as the leader of a new session whose controlling terminal is that pty: job control, ^C and resizing
work as with any shell. The client waits for the shell's exit status and exits with it; if the client goes
(the terminal is closed), the broker ends the shell's session.

Protocol: the client sends one JSON object {argv, cwd, env} with the three fds, then reads one line: the
shell's exit status (or a refusal: `refused: ...`).
"""

from __future__ import annotations

import argparse
import array
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading

MAX_REQUEST = 1 << 20
# the terminal's variables a shell takes from the app's side (its shell integration, colours, locale): all but
# the agent's own (HOME, PATH, DISPLAY, TMPDIR ... stay the agent's) and those that load code or name the app's plumbing
KEPT_OUT = re.compile(r"^(MCPWORLD_|LD_|NODE_|ELECTRON_|PYTHON|BASH_ENV$|ENV$|PROMPT_COMMAND$|GIT_|TMPDIR$)")


def serve(path: str, sandbox: list[str], base_env: dict[str, str]) -> None:
    """Serve the app's user (the owner of the socket's folder) until the environment ends the broker."""
    owner = os.stat(os.path.dirname(path)).st_uid
    for sig in (signal.SIGINT, signal.SIGQUIT):  # the shells' ^C: not ignored, whoever started the broker
        signal.signal(sig, signal.SIG_DFL)
    server = socket.socket(socket.AF_UNIX)
    if os.path.exists(path):
        os.unlink(path)
    server.bind(path)
    os.chown(path, owner, -1)
    os.chmod(path, 0o600)
    server.listen(8)
    print("listening", flush=True)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=_serve_one, args=(conn, owner, sandbox, base_env), daemon=True).start()


def _serve_one(conn: socket.socket, owner: int, sandbox: list[str], base_env: dict[str, str]) -> None:
    fds: list[int] = []
    try:
        _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        msg, anc, _flags, _addr = conn.recvmsg(MAX_REQUEST, socket.CMSG_SPACE(3 * 4))
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds += array.array("i", data[: len(data) - len(data) % 4])
        if uid != owner:
            conn.sendall(f"refused: uid {uid} is not the app's\n".encode())
            return
        req = json.loads(msg)
        argv = [str(a) for a in req["argv"]]
        if len(fds) != 3 or not argv:
            conn.sendall(b"refused: a request is the shell's argv with fds 0, 1 and 2\n")
            return
        env = {**{k: str(v) for k, v in req.get("env", {}).items() if not KEPT_OUT.match(k)}, **base_env}
        # in the sandbox: the terminal's folder (else HOME), then the shell as a session leader on the pty
        inner = ["sh", "-c", 'cd "$0" 2>/dev/null || cd; exec setsid -c "$@"', str(req.get("cwd") or ""), *argv]
        proc = subprocess.Popen([*sandbox, *inner], stdin=fds[0], stdout=fds[1], stderr=fds[2], env=env,
                                close_fds=True)
        for fd in fds:
            os.close(fd)
        fds = []
        threading.Thread(target=_end_when_client_goes, args=(conn, proc), daemon=True).start()
        conn.sendall(f"{proc.wait()}\n".encode())
    except (OSError, ValueError, KeyError, TypeError) as e:
        try:
            conn.sendall(f"refused: {type(e).__name__}: {e}\n".encode())
        except OSError:
            pass
    finally:
        for fd in fds:
            os.close(fd)
        conn.close()


def _end_when_client_goes(conn: socket.socket, proc: subprocess.Popen) -> None:
    try:
        conn.recv(1)  # the client never writes again: this returns when it is gone
    except OSError:
        pass
    if proc.poll() is None:
        proc.kill()  # the sandbox (bwrap --die-with-parent, its PID namespace) takes the session with it


def connect(path: str, argv: list[str]) -> int:
    """The client side, as the app's user on the terminal's pty: hand the pty and the shell to the broker."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # giving up the controlling terminal sends it one
    try:
        import fcntl
        import termios

        fcntl.ioctl(0, termios.TIOCNOTTY)
    except OSError:
        pass  # not our controlling terminal: nothing to give up
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.connect(path)
        request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
        sock.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
        answer = sock.makefile().readline().strip()
    except OSError as e:
        answer = f"refused: the shell broker cannot be reached ({e})"
    if not answer.lstrip("-").isdigit():
        os.write(2, f"mcpworld: no shell: {answer}\r\n".encode())
        return 126
    status = int(answer)
    return 128 - status if status < 0 else status


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--socket", required=True)
    ap.add_argument("--sandbox", help="serve: JSON argv prefix that runs a command as the agent in its sandbox")
    ap.add_argument("--connect", action="store_true", help="the client: hand this terminal and the shell over")
    ap.add_argument("argv", nargs="*", help="connect: the shell and its arguments")
    a = ap.parse_args()
    if a.connect:
        sys.exit(connect(a.socket, a.argv))
    serve(a.socket, json.loads(a.sandbox), {k: v for k, v in os.environ.items() if k != "PYTHONPATH"})


if __name__ == "__main__":
    main()
