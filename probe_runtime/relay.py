"""The probe relay: holds a probe's credential in a process of another user (root) so that nothing running as
the app's user can read it, and forwards the events of the app's probe processes to the evaluator.

An in-app probe whose host process the app user's other programs could read (a Node extension host: no
non-dumpable switch of its own before it has loaded our code, and a terminal of the same user beside it)
never sees the evaluator's secret. It connects to this relay's Unix socket (named by $MCPWORLD_PROBE_RELAY,
owned by the app user, mode 0600) and is accepted by what the kernel says of it (SO_PEERCRED), not by
anything it sends:
- every peer has made itself non-dumpable (the runtime's addon), so what the relay gives it stays its own;
- the first peer is the app's probe as the environment started it (the trial waits for its events before
  the agent starts), and pins the program (/proc/<pid>/exe) and the parent that later peers must share;
- a later peer (a second window's extension host, the one a reload starts) must be a sibling of the first:
  the same program forked by the same parent. A terminal, a task or a program the agent starts is a child of
  something else and is refused, recorded as `suspected_forgery`;
- the probe's own files (`--seal`, as the trial placed them) must be unchanged: a program of the app's user
  that rewrote them and reloaded the app would otherwise get its code admitted as the probe.

Protocol (one JSON object per line):
  peer  -> {"type": "hello"}
  relay -> {"type": "welcome", "acked": N, "config": {run_id, app, ports, secrets, bind_host}}   (no token)
  peer  -> {"type": "event", "event": {name, payload, seq, ts}}
  relay -> {"type": "ack", "seq": seq}   once the relay holds it (its client resends it until the evaluator has it)
Every peer's events go out on the relay's one stream, in the order the relay receives them. `stop` on stdin
(or its end) flushes what the evaluator has not acknowledged and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import socket
import struct
import sys

from probe_runtime.client import ProbeClient, read_config

MAX_LINE = 1 << 20
RELAY_STREAM = "-probe-relay"  # the relay's stream: <app>-probe-relay


def peer_of(sock: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end, as the kernel recorded it when it connected."""
    pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid, uid


def describe(pid: int) -> dict:
    """What /proc says of a process: its program, parent and command line (empty where it is gone)."""
    info = {"pid": pid}
    try:
        info["exe"] = os.readlink(f"/proc/{pid}/exe")
        with open(f"/proc/{pid}/stat") as f:
            info["ppid"] = int(f.read().rsplit(")", 1)[1].split()[1])
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            info["cmdline"] = f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:500]
    except (OSError, ValueError, IndexError):
        pass
    return info


def dumpable(pid: int) -> bool:
    """Whether the app user's other programs could read or ptrace the process (a non-dumpable process's /proc
    files are root's). OSError where it is gone."""
    return os.stat(f"/proc/{pid}/mem").st_uid != 0


class Siblings:
    """The first process admitted pins its program and parent; a later one must share both (the same program
    forked by the same parent: a second window's extension host, a restarted network service)."""

    def __init__(self):
        self.first: dict | None = None

    def stranger(self, me: dict) -> bool:
        """Whether `me` (describe()) is not the first process's sibling; the first one is pinned and is not."""
        if self.first is None:
            self.first = me
            return False
        return (me["exe"], me["ppid"]) != (self.first["exe"], self.first["ppid"])


def digest(path: str) -> str:
    """What a file or a folder holds: every file's relative path and bytes, links as their targets."""
    h = hashlib.sha256()
    entries = [(path, "")] if not os.path.isdir(path) else sorted(
        (os.path.join(root, n), os.path.relpath(os.path.join(root, n), path))
        for root, dirs, names in os.walk(path) for n in dirs + names)
    for full, rel in entries:
        h.update(rel.encode() + b"\0")
        if os.path.islink(full):
            h.update(b"link:" + os.readlink(full).encode())
        elif os.path.isfile(full):
            with open(full, "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
        elif not os.path.isdir(full):
            h.update(b"missing" if not os.path.lexists(full) else b"other")
    return h.hexdigest()


class Relay:
    def __init__(self, cfg: dict, socket_path: str, sealed: list[str] = ()):
        self.cfg, self.socket_path = cfg, socket_path
        self.sealed = {p: digest(p) for p in sealed}
        self.client = ProbeClient(cfg["url"], cfg["token"], cfg["run_id"], cfg["app"], source="probe",
                                  stream=f"{cfg['app']}{RELAY_STREAM}")
        self.siblings = Siblings()            # the pinned first peer and its siblings
        self.acked: dict[int, int] = {}       # peer pid -> its highest seq forwarded
        self.peer_config = {k: cfg.get(k) for k in ("run_id", "app", "ports", "secrets", "bind_host")}

    def admit(self, pid: int, uid: int) -> str | None:
        """Why this peer is refused, or None."""
        me = describe(pid)
        if "exe" not in me or "ppid" not in me:
            return "the peer is gone or unreadable"
        if uid != os.stat(self.socket_path).st_uid:
            return f"the peer runs as uid {uid}, not the app's"
        try:
            if dumpable(pid):
                return "the peer is dumpable: its memory is open to the app user's other programs"
        except OSError:
            return "the peer is gone"
        changed = [p for p, d in self.sealed.items() if digest(p) != d]
        if changed:
            return f"the probe's files changed since the trial placed them: {', '.join(changed)}"
        if self.siblings.stranger(me):
            first = self.siblings.first
            return (f"not a sibling of the app's probe process (pid {first['pid']}: {first['exe']}, "
                    f"parent {first['ppid']})")
        return None

    async def serve_peer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        pid, uid = peer_of(sock)
        why = self.admit(pid, uid)
        if why is not None:
            self.client.emit("suspected_forgery", {"reason": f"probe relay: {why}", "peer": describe(pid)})
            writer.write(json.dumps({"type": "refused", "reason": why}).encode() + b"\n")
            try:
                await writer.drain()
                # the peer closes once it has read why (closing first could reset the connection before it has)
                await asyncio.wait_for(reader.read(), 5)
            except (ConnectionError, asyncio.TimeoutError, asyncio.CancelledError):
                pass
            writer.close()
            return
        try:
            while line := await reader.readline():
                msg = json.loads(line)
                if msg.get("type") == "hello":
                    writer.write(json.dumps({"type": "welcome", "acked": self.acked.get(pid, -1),
                                             "config": self.peer_config}).encode() + b"\n")
                elif msg.get("type") == "event":
                    e = msg["event"]
                    seq = int(e["seq"])
                    if seq > self.acked.get(pid, -1):
                        self.client.emit(str(e["name"]), e.get("payload") or {}, ts=e.get("ts"))
                        self.acked[pid] = seq
                    writer.write(json.dumps({"type": "ack", "seq": seq}).encode() + b"\n")
                await writer.drain()
        except (ValueError, KeyError, TypeError) as e:
            self.client.emit("source_error", {"error": f"probe relay: malformed message from pid {pid}: {e}"[:500]})
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the peer went, or the relay is stopping
        finally:
            writer.close()

    async def run(self) -> None:
        owner = os.stat(os.path.dirname(self.socket_path))
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)
        server = await asyncio.start_unix_server(self.serve_peer, self.socket_path, limit=MAX_LINE)
        os.chown(self.socket_path, owner.st_uid, owner.st_gid)
        os.chmod(self.socket_path, 0o600)
        loop = asyncio.get_running_loop()
        # until `stop` (or the end of stdin): the environment ends the relay after the verdict's last event
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line or line.strip() == "stop":
                break
        server.close()
        await asyncio.to_thread(self.client.close, 10.0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--socket", required=True, help="where to listen; owned by whoever owns its folder")
    p.add_argument("--seal", action="append", default=[], help="a file or folder of the probe's that must not change")
    args = p.parse_args(argv)
    cfg = read_config()
    if cfg is None:
        print("probe relay: no run config", file=sys.stderr)
        return 2
    asyncio.run(Relay(cfg, args.socket, args.seal).run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
