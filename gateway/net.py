"""Loopback helpers."""

import asyncio
import fcntl
import os
import random
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path

# The next port to hand out, shared by every mcpworld process of this user on the machine (runs side by
# side, Ray workers): two trials never get the same port while the first app is still starting.
CURSOR_FILE = Path(tempfile.gettempdir()) / f"mcpworld-ports-{os.getuid()}"


def handed_out_range() -> range:
    """Ports the kernel never picks by itself: above its ephemeral range (where outgoing connections and
    binds to port 0 take theirs; 61000-65535 by default, where no well-known service listens), or below it
    when above is too narrow."""
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        low, high = 32768, 60999
    above = range(high + 1, 65536)
    return above if len(above) >= 1024 else range(max(1024, low - 8192), low)


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))  # no SO_REUSEADDR: a port with a connection lingering is passed over too
        except OSError:
            return False
    return True


def free_port() -> int:
    """A TCP port free on 127.0.0.1 that stays free until its user binds it, seconds later (an app at
    the end of its start): outside the kernel's ephemeral range, so no outgoing connection or bind to
    port 0 by any process can take it meanwhile (a port bound and released, as before, could be taken in
    that gap; a FreeCAD trial in CI failed the way a taken port makes it fail), and handed out in turn
    through a cursor file the user's mcpworld processes share under a lock."""
    span = handed_out_range()
    if len(span) < 256:  # the kernel's ephemeral range covers (nearly) all ports: nothing is safe from it
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]
    with open(CURSOR_FILE, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        text = f.read().strip()
        start = int(text) if text.isdigit() else random.randrange(len(span))
        for i in range(len(span)):
            index = (start + i) % len(span)
            if _bindable(span[index]):
                f.seek(0)
                f.truncate()
                f.write(str(index + 1))
                return span[index]
    raise OSError(f"no free TCP port in {span.start}-{span.stop - 1}")


async def wait_listening(host: str, port: int, timeout: float,
                         keep_trying: Callable[[], bool] = lambda: True) -> bool:
    """Whether something came to accept TCP connections on host:port within `timeout` seconds
    (False at once if `keep_trying()` turns false, e.g. the server's process exited)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            _reader, writer = await asyncio.open_connection(host, port)
            writer.close()
            return True
        except OSError:
            if asyncio.get_running_loop().time() > deadline or not keep_trying():
                return False
            await asyncio.sleep(0.05)
