"""Run a program confined by Landlock (the kernel's unprivileged access control): it reads only under the
folders given with --read (and the system's), writes only under those given with --write, makes no TCP
connection and binds no TCP port, and signals or reaches by abstract socket nothing outside itself.

For a program an app starts as its own user that the agent then drives (Joplin's terminal client opens
`vi -Z` on a note's file): as the app's user it could read and write every file of that user (its profile,
the probe's files); confined, only the note's folder. The rules hold for the program and everything it
starts, and cannot be lifted from inside (no_new_privs is set first, as Landlock requires).

For the programs an app starts that the agent chooses (VS Code's extension host runs a debuggee, git with the
workspace's hooks, a program a setting names): `--write HOME --hide PRIVATE...` lets them read and write the
user's files as the agent's own programs may, except the app's private folders, which no rule reaches (a
folder holding a hidden path is granted entry by entry beside it, symbolic links left out); `--tcp` leaves
TCP to them (a debuggee's inspector).

Usage: confine.py [--read DIR]... [--write DIR]... [--hide PATH]... [--tcp] -- PROGRAM ARGS...
Exits 3 with a message when the kernel has no Landlock (the caller decides whether to run it unconfined).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import struct
import sys

# the same numbers on every architecture (syscalls added after the tables were unified)
CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

# filesystem rights, by the ABI version that brought them
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
ABI1_ALL = (1 << 13) - 1            # execute .. make_sym
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1       # ABI 4
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1   # ABI 6

# what any program needs to start and run: its libraries, the system's configuration, its terminal
SYSTEM_READ = ["/usr", "/etc", "/lib", "/lib64", "/bin", "/sbin", "/opt", "/proc", "/sys"]
DEVICES = "/dev"

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class Unsupported(OSError):
    pass


def _call(number: int, *args) -> int:
    r = _libc.syscall(ctypes.c_long(number), *args)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def abi() -> int:
    """The kernel's Landlock ABI version (0: none)."""
    try:
        return _call(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    except OSError:
        return 0


def fs_rights(version: int) -> int:
    rights = ABI1_ALL
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    if version >= 5:
        rights |= IOCTL_DEV
    return rights


def beside(folder: str, hidden: list[str]) -> list[str]:
    """`folder`, or where it holds a hidden path, the entries of it that reach none (recursively): what a rule
    may grant so that the hidden paths stay out of it. Symbolic links are left out (a rule follows them)."""
    folder = os.path.abspath(folder)
    inside = [h for h in (os.path.abspath(h) for h in hidden) if h == folder or h.startswith(folder.rstrip("/") + "/")]
    if not inside:
        return [folder]
    if folder in inside:
        return []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    return [p for e in entries if not e.is_symlink() for p in beside(e.path, inside)]


def restrict(read: list[str], write: list[str], hide: list[str] = (), tcp: bool = False) -> None:
    """Confine this process (and what it starts) to the rules; Unsupported where the kernel has no Landlock."""
    version = abi()
    if version < 1:
        raise Unsupported("the kernel has no Landlock")
    read = [p for folder in read for p in beside(folder, hide)]
    write = [p for folder in write for p in beside(folder, hide)]
    handled = fs_rights(version)
    attr = struct.pack("Q", handled)
    if version >= 4:
        # handled and never allowed: no TCP at all (unless `tcp`: then not handled)
        attr += struct.pack("Q", 0 if tcp else NET_BIND_TCP | NET_CONNECT_TCP)
    if version >= 6:
        attr += struct.pack("Q", SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _call(CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    try:
        reading = READ_FILE | READ_DIR | EXECUTE
        rules = [(p, reading) for p in [*SYSTEM_READ, *read]] + [(DEVICES, READ_FILE | WRITE_FILE | READ_DIR | (
            IOCTL_DEV if version >= 5 else 0))] + [(p, handled) for p in write]
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a system folder this machine lacks
            try:
                # a folder's rights: all of them; a file's: only those that apply to files
                if not os.path.isdir(path):
                    rights &= EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
                rule = ctypes.create_string_buffer(struct.pack("=Qi", rights & handled, fd), 12)
                _call(ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH), rule, ctypes.c_uint32(0))
            finally:
                os.close(fd)
        if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        _call(RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--read", action="append", default=[], help="a folder or file it may read (repeatable)")
    p.add_argument("--write", action="append", default=[], help="a folder or file it may read and change (repeatable)")
    p.add_argument("--hide", action="append", default=[], help="a path inside those it may not reach (repeatable)")
    p.add_argument("--tcp", action="store_true", help="TCP connections and ports allowed")
    p.add_argument("program", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not program:
        p.error("no program given")
    try:
        restrict(args.read, args.write, args.hide, args.tcp)
    except Unsupported as e:
        print(f"confine: {e}", file=sys.stderr)
        return 3
    os.execvp(program[0], program)


if __name__ == "__main__":
    sys.exit(main())
