"""Loopback helpers."""

import socket


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1 (bound and released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
