"""probe_runtime/confine.py on this machine's kernel: a confined program writes only where it is told, reads
nothing of the user's beyond that, connects to no TCP port and signals nothing outside itself; the same
commands unconfined do all of it (so each refusal is the confinement's)."""

import os
import socket
import subprocess
import sys

import pytest

from mcpworld import paths
from probe_runtime import confine

pytestmark = pytest.mark.skipif(confine.abi() < 6, reason="Landlock ABI 6 (network and scopes) is needed")


def attempts(tmp_path, port: int, confined: bool, rules=None) -> dict[str, bool]:
    mine, others = tmp_path / "mine", tmp_path / "others"
    script = f"""
import os, socket
def ok(f):
    try:
        f(); return True
    except OSError:
        return False
print(ok(lambda: open("{mine}/note.md", "w").write("x")),
      ok(lambda: os.rename("{mine}/note.md", "{mine}/note.md~")),
      ok(lambda: open("{others}/profile.sqlite").read()),
      ok(lambda: open("{others}/startup.js", "w").write("x")),
      ok(lambda: open("/etc/hostname").read()),
      ok(lambda: socket.create_connection(("127.0.0.1", {port}), 5)),
      ok(lambda: os.kill({os.getpid()}, 0)))
"""
    rules = rules if rules is not None else ["--write", str(mine)]
    prefix = [sys.executable, "-m", "probe_runtime.confine", *rules, "--"] if confined else []
    # the system's Python (under /usr, which the confinement lets it read), not this run's
    out = subprocess.run([*prefix, "/usr/bin/python3", "-c", script], capture_output=True, text=True,
                         cwd=paths.CODE_ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    names = ["write_own", "rename_own", "read_other", "write_other", "read_system", "tcp", "signal"]
    return dict(zip(names, (w == "True" for w in out.stdout.split())))


def test_a_confined_program_stays_in_its_folder(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "others").mkdir()
    (tmp_path / "others" / "profile.sqlite").write_text("the app's data")
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        free = attempts(tmp_path, port, confined=False)
        confined = attempts(tmp_path, port, confined=True)
    assert all(free.values()), free
    assert confined == {"write_own": True, "rename_own": True, "read_other": False, "write_other": False,
                        "read_system": True, "tcp": False, "signal": False}, confined


def test_a_hidden_folder_stays_out_of_a_granted_one(tmp_path):
    """`--write ROOT --hide ROOT/others`: all of ROOT but the hidden folder, also through a link the agent might
    plant beside it; `--tcp` leaves TCP open."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "others").mkdir()
    (tmp_path / "others" / "profile.sqlite").write_text("the app's data")
    (tmp_path / "mine" / "link").symlink_to(tmp_path / "others")
    assert confine.beside(str(tmp_path), [str(tmp_path / "others")]) == [str(tmp_path / "mine")]
    rules = ["--tcp", "--write", str(tmp_path), "--hide", str(tmp_path / "others")]
    with socket.create_server(("127.0.0.1", 0)) as server:
        confined = attempts(tmp_path, server.getsockname()[1], confined=True, rules=rules)
    assert confined == {"write_own": True, "rename_own": True, "read_other": False, "write_other": False,
                        "read_system": True, "tcp": True, "signal": False}, confined
    linked = subprocess.run([sys.executable, "-m", "probe_runtime.confine", *rules, "--", "/usr/bin/cat",
                             str(tmp_path / "mine" / "link" / "profile.sqlite")], capture_output=True, text=True,
                            cwd=paths.CODE_ROOT, timeout=60)
    assert linked.returncode != 0 and "Permission denied" in linked.stderr, (linked.returncode, linked.stderr)
