"""Loopback helpers."""

import asyncio
import socket
from collections.abc import Callable


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1 (bound and released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
