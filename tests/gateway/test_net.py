"""Ports handed to apps: free when handed out, and still free seconds later when the app binds them."""

import socket
import subprocess
import sys
from pathlib import Path

from gateway import net
from gateway.net import free_port, handed_out_range


def ephemeral_range() -> range:
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    return range(low, high + 1)


def test_ports_lie_outside_the_kernels_ephemeral_range():
    """Outgoing connections and binds to port 0 (any process's) take their ports from the ephemeral range:
    a port handed out there could be taken before the app binds it."""
    ephemeral = ephemeral_range()
    ports = [free_port() for _ in range(20)]
    assert not [p for p in ports if p in ephemeral]
    assert all(p in handed_out_range() for p in ports)
    # and what the kernel hands out by itself never lands on them
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        assert s.getsockname()[1] not in handed_out_range()


def test_processes_side_by_side_never_get_the_same_port():
    take = "from gateway.net import free_port; print(' '.join(str(free_port()) for _ in range(100)))"
    procs = [subprocess.Popen([sys.executable, "-c", take], stdout=subprocess.PIPE, text=True) for _ in range(3)]
    ports = [int(p) for proc in procs for p in proc.communicate(timeout=60)[0].split()]
    assert all(proc.returncode == 0 for proc in procs)
    assert len(ports) == 300 and len(set(ports)) == 300


def test_a_port_in_use_is_passed_over(tmp_path, monkeypatch):
    monkeypatch.setattr(net, "CURSOR_FILE", tmp_path / "cursor")
    span = handed_out_range()
    first = free_port()
    index = span.index(first)
    with socket.socket() as held:  # someone listens on the port the cursor points at next
        held.bind(("127.0.0.1", span[(index + 1) % len(span)]))
        held.listen()
        assert free_port() == span[(index + 2) % len(span)]
