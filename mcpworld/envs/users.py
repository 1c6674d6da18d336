"""Who runs what on the local backend: the app as one unprivileged user, the agent's tools as another,
sharing a group for the files both may touch; the runner (and the Frida bridge, the state query, the MCP
servers) stay root. The agent's tools also run in a sandbox of their own (bubblewrap): their own PID,
network and IPC namespaces, and a file system with the system's programs, the environment's HOME and
its X display only, so the repository, the run's records, other environments and the app's processes
are out of sight.

Started by an ordinary user, the runner cannot switch users: everything runs as that user and the
run says `isolation: none` (a hostile agent could then read the app's memory).
"""

from __future__ import annotations

import atexit
import grp
import os
import pwd
import secrets
import shutil
import socket
import stat
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import psutil

from mcpworld.errors import PrerequisiteError

APP_USER, AGENT_USER, SHARE_GROUP = "mcpworld-app", "mcpworld-agent", "mcpworld-share"


@dataclass(frozen=True)
class Users:
    app_uid: int
    agent_uid: int
    share_gid: int
    app_gid: int
    agent_gid: int


@cache
def users() -> Users | None:
    """The two accounts and their shared group, created when missing; None when not root (no isolation)."""
    if os.geteuid() != 0:
        return None
    closed = [str(p) for p in _closed_folders()]
    if closed:
        raise PrerequisiteError(f"the app's user cannot reach mcpworld's Python or the repository: {', '.join(closed)} "
                                "not passable for others (run `make setup`, which makes them passable)")
    if not _exists(grp.getgrnam, SHARE_GROUP):
        _run(["groupadd", "--system", SHARE_GROUP])
    for name in (APP_USER, AGENT_USER):
        if not _exists(pwd.getpwnam, name):
            _run(["useradd", "--system", "--no-create-home", "--user-group", "--groups", SHARE_GROUP,
                  "--shell", "/bin/bash", name])
    app, agent = pwd.getpwnam(APP_USER), pwd.getpwnam(AGENT_USER)
    return Users(app.pw_uid, agent.pw_uid, grp.getgrnam(SHARE_GROUP).gr_gid, app.pw_gid, agent.pw_gid)


def prepare(log) -> None:
    """Set-up (as root): the accounts, and the folders on the way to mcpworld's Python and the repository
    made passable (o+x, not listable) for the app's user, which runs the app from there."""
    if os.geteuid() != 0:
        log("not root: the app and the agent's tools will run as this user, without isolation")
        return
    for folder in _closed_folders():
        folder.chmod(folder.stat().st_mode | stat.S_IXOTH)
        log(f"made {folder} passable (o+x) for the app's user")
    users.cache_clear()
    u = users()
    log(f"users: {APP_USER} ({u.app_uid}) runs the app, {AGENT_USER} ({u.agent_uid}) the agent's tools, "
        f"sharing group {SHARE_GROUP} ({u.share_gid})")


def _closed_folders() -> list[Path]:
    """Folders on the way to the runner's Python, its standard library and the repository that others
    cannot pass."""
    from mcpworld import paths

    targets = {Path(sys.executable).resolve(), Path(sys.base_prefix).resolve(), Path(sys.prefix), paths.ROOT}
    closed = set()
    for t in targets:
        for folder in [t, *t.parents] if t.is_dir() else t.parents:
            if not folder.stat().st_mode & stat.S_IXOTH:
                closed.add(folder)
    return sorted(closed)


def _exists(lookup, name: str) -> bool:
    try:
        lookup(name)
        return True
    except KeyError:
        return False


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise PrerequisiteError(f"{' '.join(argv)} failed: {done.stderr.strip()}")


def _bwrap_and_setpriv(why: str) -> tuple[str, str]:
    bwrap, setpriv = shutil.which("bwrap"), shutil.which("setpriv")
    if not bwrap or not setpriv:
        raise PrerequisiteError(f"'bwrap' (bubblewrap) and 'setpriv' are needed {why} (run `make setup`)")
    return bwrap, setpriv


def sandbox(argv: list[str], u: Users, home: str, tmp: str, display: str, xauthority: str,
            terminal: bool = False) -> list[str]:
    """argv run as the agent's user inside bubblewrap: own PID/network/IPC namespaces, read-only system,
    the environment's own /tmp (`tmp`, one folder for all the agent's commands, so a file the editor writes
    there is there for bash), the environment's HOME, and the X display's socket and cookie. `terminal`: a
    shell on a pty of the host's (an app's terminal) sees /dev/pts, and the apps' installs in /opt read-only
    (a terminal's shell integration script)."""
    bwrap, setpriv = _bwrap_and_setpriv("to sandbox the agent")
    x_socket = f"/tmp/.X11-unix/X{display.lstrip(':')}"
    box = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net", "--unshare-ipc",
           "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev",
           "--bind", tmp, "/tmp", "--perms", "0755", "--dir", "/tmp/.X11-unix",
           "--ro-bind", x_socket, x_socket, "--ro-bind", xauthority, xauthority]
    if terminal:
        box += ["--dev-bind", "/dev/pts", "/dev/pts", "--ro-bind-try", "/opt", "/opt"]
    for parent in reversed(Path(home).parents):  # the folders on the way to HOME: passable, nothing else in them
        if str(parent) not in ("/", "/tmp"):
            box += ["--perms", "0755", "--dir", str(parent)]
    box += ["--bind", home, home, "--chdir", home]
    for link in ("bin", "sbin", "lib", "lib64", "lib32"):  # merged /usr: /bin -> usr/bin ...
        target = Path("/") / link
        if target.is_symlink():
            box += ["--symlink", os.readlink(target), f"/{link}"]
    # umask 007: what the agent writes in HOME, the app's user (same group) may read and change
    return [*box, "--", setpriv, f"--reuid={u.agent_uid}", f"--regid={u.agent_gid}", f"--groups={u.share_gid}",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "sh", "-c", 'umask 007; exec "$@"', "sh", *argv]


def with_etc(argv: list[str], u: Users, files: list[tuple[str, str]]) -> list[str]:
    """argv run as the app's user in a mount namespace of its own where `files` [(file, path under /etc)] are
    in place, read-only and root's, while the host's /etc is not changed. Each file's folder is a fresh one
    there, so what the host has in it does not reach the app; a folder the host lacks is made on a fresh
    copy of its nearest existing parent, whose entries are the host's."""
    bwrap, setpriv = _bwrap_and_setpriv("to run the app")
    box = [bwrap, "--die-with-parent", "--dev-bind", "/", "/"]
    for folder in dict.fromkeys(Path(to).parent for _, to in files):
        parent = folder
        while not parent.is_dir():
            parent = parent.parent
        box += ["--tmpfs", str(parent)]
        if parent != folder:  # bwrap binds from the host's tree, which the fresh folder does not hide
            for entry in sorted(parent.iterdir()):
                box += ["--dev-bind", str(entry), str(entry)]
            for made in reversed([folder, *folder.parents][:len(folder.parents) - len(parent.parents)]):
                box += ["--perms", "0755", "--dir", str(made)]
    for source, to in files:
        box += ["--ro-bind", source, to]
    return [*box, "--", setpriv, f"--reuid={u.app_uid}", f"--regid={u.share_gid}",
            f"--groups={u.app_gid},{u.share_gid}", *argv]


def write_xauthority(path: Path, cookie: bytes) -> None:
    """An X cookie file that holds for any display of this host: a FamilyWild entry (libXau's clients) and a
    local one with no display number (python-xlib's)."""
    path.write_bytes(_xauth_entry(0xFFFF, b"", cookie) + _xauth_entry(256, socket.gethostname().encode(), cookie))


def _xauth_entry(family: int, address: bytes, cookie: bytes) -> bytes:
    def field(b: bytes) -> bytes:
        return struct.pack(">H", len(b)) + b

    return struct.pack(">H", family) + field(address) + field(b"") + field(b"MIT-MAGIC-COOKIE-1") + field(cookie)


def xauthority_cookie(path: Path) -> bytes:
    """The cookie of a file write_xauthority wrote (its first entry's data)."""
    from Xlib.xauth import Xauthority

    return Xauthority(str(path)).entries[0][4]


def admit_address(path: Path, ip: str, cookie: bytes) -> None:
    """Add `cookie` (the file's) for any display at an IPv4 address to the file (python-xlib matches a TCP
    display by its address: the wildcard entry is libXau's alone)."""
    entry = _xauth_entry(0, socket.inet_aton(ip), cookie)
    if entry not in path.read_bytes():
        with open(path, "ab") as f:
            f.write(entry)


# where an app reads what it runs or opens (mimeapps.list, .desktop handlers, autostart, fonts, its own
# folders): the agent may read them, not write them
APP_READ = (".config", ".local", ".local/share", ".local/state", ".cache")


def guarded_folders(home: Path, private: list[Path]) -> tuple[set[Path], set[Path]]:
    """(the app-read roots, the folders on the way to a private folder): the first stay the app user's (the
    shared group reads them), the second keep the agent from renaming the app's entries in them (sticky)."""
    home = home.resolve()
    read = {home / r for r in APP_READ}
    ways = {home} | {parent for p in private for parent in p.parents if home in parent.parents}
    return read, ways - read


def hand_over(home: Path, private: list[Path], u: Users) -> None:
    """HOME (as the runner restored it) to the app's user and the shared group: folders rwx and set-group-id
    for both, files rw for both; `private` folders and their contents the app user's alone. Below the
    app-read roots (~/.config, ~/.local, ~/.cache) the shared group only reads, so the agent can plant no
    handler or autostart entry for the app to run; HOME and the other folders above a private one are sticky,
    so the agent can neither rename a private folder nor the way to it and put its own in its place."""
    private = [p.resolve() for p in private]
    read, ways = guarded_folders(home, private)
    for r in sorted(read):  # made if missing: else the agent could make one (HOME is writable to it) and own it
        r.mkdir(exist_ok=True)
    for d, dirs, files in os.walk(home):
        here = Path(d).resolve()
        mine = any(here == p or p in here.parents for p in private)
        read_only = not mine and any(here == r or r in here.parents for r in read)
        os.chown(d, u.app_uid, u.app_gid if mine else u.share_gid)
        os.chmod(d, 0o700 if mine else 0o2750 if read_only else 0o3770 if here in ways else 0o2770)
        for f in files:
            path = os.path.join(d, f)
            if os.path.islink(path):
                continue
            os.chown(path, u.app_uid, u.app_gid if mine else u.share_gid)
            os.chmod(path, 0o600 if mine else 0o640 if read_only else 0o660)


XAUTH_PREFIX = "mcpworld-xauth-"


def runner_xauthority(u: Users | None) -> Path:
    """This runner's X cookie (one for all its displays; a sandboxed agent sees only its own display's
    socket): written once, readable by the shared group, and where the runner's own X clients look. Removed
    when the runner exits; those of runners killed before that, when the next one writes its own."""
    path = Path(tempfile.gettempdir()) / f"{XAUTH_PREFIX}{os.getpid()}"
    if not path.exists():
        sweep_xauthorities()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
        os.close(fd)
        atexit.register(path.unlink, missing_ok=True)
        write_xauthority(path, secrets.token_bytes(16))
    if u and path.stat().st_gid != u.share_gid:  # also when a container's environment wrote it first
        os.chown(path, 0, u.share_gid)
    os.environ["XAUTHORITY"] = str(path)
    return path


def sweep_xauthorities() -> list[Path]:
    """Delete the X cookies of runners that are gone (the process the file is named after no longer runs)."""
    removed = []
    for path in Path(tempfile.gettempdir()).glob(f"{XAUTH_PREFIX}*"):
        try:
            pid = int(path.name[len(XAUTH_PREFIX):])
        except ValueError:
            continue
        if not psutil.pid_exists(pid):  # as local.sweep_stale judges a runner gone
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed
