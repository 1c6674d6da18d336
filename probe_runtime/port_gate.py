"""The port gate: an app server's TCP port that admits only the app's own client, by what the kernel says of
the process at the other end, not by anything it sends.

An app whose page is served on a port (code-server, shown in Chromium) would serve any process that reaches
that port: on the app user's loopback a program the app starts for the agent (a debuggee, a language server
named in settings), and in a container the agent's bash too. Such a process could open a second workbench
and speak the app's protocol to it. The app's server listens on a Unix socket in a folder this gate makes
(`$MCPWORLD_GATED_SOCKET`; root's with the sticky bit, the app's group may create in it), and once the socket
is there the gate makes it root's, mode 0600: no process of the app's user can connect to it or replace it.
The gate (root) listens on the app's port and forwards a connection to the socket only if the process
holding the other end (found through /proc/net/tcp and the holders' fds):
- runs as the app's user (the owner of `--owner-of`) and is non-dumpable (the runtime's addon), so nothing
  of that user reads or steers it;
- shares program and parent with the first process admitted. The trial lets the agent act only once the
  app is ready, and the app's client is the first to connect (its launch command waits for the socket, not
  the port), so that first peer is the client's network process; a second one it starts (its restart) has
  the same parent. A program started by the app's server, the agent or anyone else is refused.

Started by an ordinary user (the local backend without users to switch to) the gate admits that user's
processes: everything runs as one user there.

A refusal closes the connection and is written to stdout as one JSON line {reason, peer} (the runner records
it as `suspected_forgery`); each distinct refusal once, then counted. The first line is `listening <socket>`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import sys
import tempfile
import time

from probe_runtime.relay import Siblings, describe, dumpable

SOCKET_NAME = "server.sock"
HOLDER_WAIT = 2.0  # s
GONE = "the peer's socket is closed"  # nothing to refuse: no process can use that connection any more


def _hex_address(host: str, port: int, family: int) -> str:
    """An address as /proc/net/tcp{,6} writes it: the address's bytes as host-order words, then the port."""
    packed = socket.inet_pton(family, host)
    words = [packed[i:i + 4] for i in range(0, len(packed), 4)]
    return "".join(int.from_bytes(w, sys.byteorder).to_bytes(4, "big").hex().upper() for w in words) + f":{port:04X}"


def tcp_socket_of(peer: tuple, local: tuple) -> tuple[int, int, str] | None:
    """(uid, inode, TCP state in hex) of the socket whose own address is `peer` and whose other end is `local` (ours)."""
    family = socket.AF_INET6 if ":" in peer[0] else socket.AF_INET
    want = (_hex_address(peer[0], peer[1], family), _hex_address(local[0], local[1], family))
    with open("/proc/net/tcp6" if family == socket.AF_INET6 else "/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if (fields[1], fields[2]) == want:
                return int(fields[7]), int(fields[9]), fields[3]
    return None


def holders(inode: int, uid: int) -> list[int]:
    """The processes of `uid` holding the socket."""
    target = f"socket:[{inode}]"
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as f:
                uids = next(line for line in f if line.startswith("Uid:")).split()[1:]
            if int(uids[0]) != uid:
                continue
            fds = os.listdir(f"/proc/{pid}/fd")
        except (OSError, StopIteration, ValueError, IndexError):
            continue  # the process is gone
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    found.append(int(pid))
                    break
            except OSError:
                continue  # closed since the listing: a busy process (Chromium's) opens and closes fds all along
    return found


class Gate:
    def __init__(self, listen: tuple[str, int], folder: str, owner: os.stat_result):
        self.listen, self.owner = listen, owner
        self.upstream = os.path.join(folder, SOCKET_NAME)
        self.siblings = Siblings()
        self.refused: dict[tuple, int] = {}

    def admit(self, peer: tuple, local: tuple) -> tuple[str | None, dict]:
        """Why the process at `peer` is refused (or None), and what /proc says of it."""
        found = tcp_socket_of(peer, local)
        if found is None:
            return "the peer's socket is gone", {"address": list(peer)}
        uid, inode, state = found
        if inode == 0:  # the peer has closed its end already (Chromium drops a connection it opened ahead)
            print(f"port gate: {peer} closed already ({found})", file=sys.stderr, flush=True)
            return GONE, {}
        if uid != self.owner.st_uid:
            return f"the peer runs as uid {uid}, not the app's", {"address": list(peer), "uid": uid}
        if os.geteuid() != 0:
            # started by an ordinary user, everything runs as that user: no program to tell apart (and the
            # app's non-dumpable processes are unreadable to it)
            return None, {}
        pids = holders(inode, uid)
        waited = 0.0
        while not pids and waited < HOLDER_WAIT:
            # the socket may be in flight between processes (SCM_RIGHTS): look again until it has a holder, is
            # closed, or the wait is over
            time.sleep(0.05)
            waited += 0.05
            again = tcp_socket_of(peer, local)
            if again is None or again[1] != inode:
                print(f"port gate: {peer} closed while looked at ({again})", file=sys.stderr, flush=True)
                return GONE, {}
            pids = holders(inode, uid)
        if waited:
            print(f"port gate: inode {inode} held by {pids or 'no process'} after {waited:.2f} s",
                  file=sys.stderr, flush=True)
        if not pids:
            return "no process holds the peer's socket", {"address": list(peer), "inode": inode, "tcp_state": state}
        for pid in pids:
            me = describe(pid)
            if "exe" not in me or "ppid" not in me:
                return "the peer is gone or unreadable", me
            if dumpable(pid):
                return "the peer is dumpable: the app user's other programs could steer it", me
            pinning = self.siblings.first is None
            if self.siblings.stranger(me):
                first = self.siblings.first
                return f"not the app's client (pid {first['pid']}: {first['exe']}, parent {first['ppid']})", me
            if pinning:
                print(f"port gate: pinned {json.dumps(me)}", file=sys.stderr, flush=True)
        return None, {}

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer, local = writer.get_extra_info("peername")[:2], writer.get_extra_info("sockname")[:2]
        try:
            why, who = await asyncio.to_thread(self.admit, peer, local)
        except OSError as e:
            why, who = f"the peer could not be looked up: {e}", {"address": list(peer)}
        if why is not None:
            if why is not GONE:
                self._refusal(why, who)
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(self.upstream)
        except OSError:
            writer.close()
            return
        try:
            await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer))
        except asyncio.CancelledError:  # the gate is stopping
            pass

    def _refusal(self, why: str, who: dict) -> None:
        key = (why, who.get("exe"))
        self.refused[key] = self.refused.get(key, 0) + 1
        if self.refused[key] == 1:
            print(json.dumps({"reason": f"port gate: {why}", "peer": who}), flush=True)

    async def guard_socket(self) -> None:
        """Once the app's server has made its socket: root's, so the app's user can neither use nor replace it."""
        while not os.path.exists(self.upstream):
            await asyncio.sleep(0.02)
        if os.geteuid() == 0:
            os.chown(self.upstream, 0, 0)
            os.chmod(self.upstream, 0o600)

    async def run(self) -> None:
        server = await asyncio.start_server(self.serve, *self.listen)
        print("listening", self.upstream, flush=True)
        guard = asyncio.ensure_future(self.guard_socket())
        loop = asyncio.get_running_loop()
        while True:  # until `stop` on stdin or its end
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line or line.strip() == "stop":
                break
        guard.cancel()
        server.close()
        counts = [{"reason": r, "exe": e, "times": n} for (r, e), n in self.refused.items() if n > 1]
        if counts:
            print(json.dumps({"counted": counts}), flush=True)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.close()
        except RuntimeError:  # the loop is closing
            pass


def make_folder(beside: str, owner: os.stat_result) -> str:
    """A fresh folder for the app server's socket beside the app's private folder (in the environment's own,
    root's, which goes with the environment even if the gate is killed): root's, the app's group may create
    in it, and the sticky bit keeps anyone but the owner of an entry from removing or renaming it."""
    folder = tempfile.mkdtemp(prefix="gate-", dir=os.path.dirname(os.path.abspath(beside)))
    if os.geteuid() == 0:
        os.chown(folder, 0, owner.st_gid)
    os.chmod(folder, 0o1770)
    return folder


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--listen", required=True, help="HOST:PORT, the app's port")
    p.add_argument("--owner-of", required=True, help="a folder of the app user's (its owner is the app's user)")
    args = p.parse_args(argv)
    host, _, port = args.listen.rpartition(":")
    owner = os.stat(args.owner_of)
    folder = make_folder(args.owner_of, owner)
    try:
        asyncio.run(Gate((host, int(port)), folder, owner).run())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
