"""VS Code's state at the start and the end of a trial, in four parts:

* the window, as the probe's bridge reads it live: tabs, visible editors, the cursor, unsaved files, the watched
  settings in effect, terminals, errors, the extensions installed for the user, breakpoints (by VS Code's id)
  and every debug session started (by its id);
* the settings files VS Code keeps for the user, read from disk: the user's and the machine's settings (every
  key, not only the watched ones), the user's key bindings, and the user's other configuration files (tasks,
  snippets, MCP servers, profiles);
* every git repository in the workspace, read with git itself: HEAD, branches, tags, stashes, the status of
  each changed file and the repository's own configuration;
* the files the agent works with, each by its path as VS Code and its MCP tools name it (relative to the
  workspace folder; `~/Downloads/...` and `~/Desktop/...` outside it), read by the core's reader
  (mcpworld.sources.workfiles.describe: size, hash, a small text file's text), with `read_file` below adding
  what a JSON file holds, parsed as VS Code parses its settings (comments and trailing commas allowed), and
  the text of small text files the core does not read as text (.mjs, dotfiles, ...). The repositories'
  `.git` and `node_modules` folders are left out (git's state is read with git).

A VS Code that is gone has no window to read: the query fails, and so does the verdict."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
from pathlib import Path

from mcp_servers.bridge import Bridge

MAX_TEXT = 64 * 1024
# VS Code's own bookkeeping in the user's folder: storage, local history, backups of unsaved files (`dirty` says
# which), caches: never the user's configuration
USER_BOOKKEEPING = {"globalStorage", "workspaceStorage", "History", "Backups", "caches", "sync", "CachedProfilesData"}
USER_STRUCTURED = {"settings.json", "keybindings.json"}   # read as records of their own
# files VS Code writes there for itself: its machine id and caches of extension and chat model lists
USER_OWN_FILES = {"machineid", "chatLanguageModels.json", "customBuiltinExtensionsCache.json",
                  "systemExtensionsCache.json"}


# -- JSON with comments, as VS Code reads its settings files ------------------------------------------------
def jsonc(text: str):
    """Parse JSON with // and /* */ comments and trailing commas (VS Code's settings format)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            while i < n and text[i] not in "\r\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c in "}]":
            # a trailing comma before a closing bracket is dropped
            k = len(out) - 1
            while k >= 0 and out[k].isspace():
                k -= 1
            if k >= 0 and out[k] == ",":
                del out[k]
            out.append(c)
            i += 1
        else:
            out.append(c)
            i += 1
    body = "".join(out).strip()
    return json.loads(body) if body else None


def _json_file(path: Path):
    """(value, error) of a JSON-with-comments file; (None, None) when it does not exist."""
    if not path.is_file():
        return None, None
    try:
        return jsonc(path.read_text(encoding="utf-8")), None
    except (OSError, ValueError) as e:
        return None, f"{type(e).__name__}: {e}"


def settings_file(path: Path) -> dict:
    """Every setting in a settings file, by its id: {"editor.fontSize": {"value": 16}, ...}."""
    value, error = _json_file(path)
    if error:
        return {"(unreadable)": {"value": error}}
    if value is None:
        return {}
    if not isinstance(value, dict):
        return {"(not an object)": {"value": value}}
    return {k: {"value": v} for k, v in value.items()}


def keybindings(path: Path) -> list:
    value, error = _json_file(path)
    if error:
        return [{"(unreadable)": error}]
    if value is None:
        return []
    return value if isinstance(value, list) else [{"(not a list)": value}]


def user_files(user: Path) -> list[dict]:
    """The user's other configuration files (tasks.json, snippets, mcp.json, profiles), with their text."""
    import hashlib

    out = []
    if not user.is_dir():
        return out
    for folder, dirs, names in os.walk(user):
        rel_folder = Path(folder).relative_to(user)
        if rel_folder == Path("."):
            dirs[:] = sorted(d for d in dirs if d not in USER_BOOKKEEPING)
            names = [n for n in names if n not in USER_STRUCTURED and n not in USER_OWN_FILES]
        else:
            dirs.sort()
        for name in sorted(names):
            p = Path(folder) / name
            try:
                data = p.read_bytes()
            except OSError as e:
                out.append({"path": str(rel_folder / name), "error": str(e)})
                continue
            item = {"path": os.path.normpath(str(rel_folder / name)), "size": len(data),
                    "sha256": hashlib.sha256(data).hexdigest()}
            if len(data) <= MAX_TEXT:
                item["text"] = data.decode("utf-8", "replace")
            out.append(item)
    return out


# -- git ------------------------------------------------------------------------------------------------------
# The repository's .git is the agent's to write, and a repository config can name programs git runs (core.fsmonitor
# and filter drivers in `status`, gpg.program under log.showSignature, an include.path bringing either): this
# query runs as root. Git reads a stand-in git directory instead, which shares the repository's objects, refs,
# logs, index and info but has a config of ours; the repository's own config is read as a file, not followed.
SHARED = ("objects", "refs", "logs", "packed-refs", "index", "info")  # HEAD is copied: git takes a linked HEAD
# only when it points into refs/


@contextlib.contextmanager
def _stand_in(root: Path):
    real = root / ".git"
    if not real.is_dir() or real.is_symlink():
        raise RuntimeError(".git is not a folder of the workspace (a linked worktree, a submodule or a link): not read")
    with tempfile.TemporaryDirectory(prefix="mcpworld-git-") as tmp:
        git_dir = Path(tmp)
        for name in SHARED:
            if (real / name).exists():
                (git_dir / name).symlink_to(real / name)
        (git_dir / "HEAD").write_bytes((real / "HEAD").read_bytes()[:4096] if (real / "HEAD").is_file() else b"")
        fmt = _config_file(real / "config").get("extensions.objectformat", "")
        (git_dir / "config").write_text("[core]\n\trepositoryformatversion = 1\n\tbare = false\n"
                                         + (f"[extensions]\n\tobjectformat = {fmt}\n" if fmt else ""))
        yield git_dir


def _config_file(path: Path) -> dict[str, str]:
    """A git config file's entries as git parses it, includes not followed (`--file` reads that file alone)."""
    if not path.is_file():
        return {}
    text = _run(["git", "config", "--file", str(path), "--list", "-z"], os.environ.get("HOME", "/"), None)
    return dict((kv.split("\n", 1) + [""])[:2] for kv in text.split("\0") if kv)


def _run(cmd: list[str], home: str, extra: dict | None) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "GIT_OPTIONAL_LOCKS": "0",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C", **(extra or {})}
    out = subprocess.run(cmd, capture_output=True, env=env, timeout=20)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.decode("utf-8", "replace").strip() or f"{' '.join(cmd[:3])} failed")
    return out.stdout.decode("utf-8", "replace")


def _git(root: Path, home: str, *args: str) -> str:
    with _stand_in(root) as git_dir:
        return _run(["git", "-c", "safe.directory=*", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
                     *args], home, {"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(root)})


def _refs(root: Path, home: str, prefix: str) -> list[dict]:
    text = _git(root, home, "for-each-ref", "--format=%(refname:short)%00%(objectname)%00%(contents:subject)", prefix)
    out = []
    for line in text.splitlines():
        name, commit, subject = (line.split("\0") + ["", ""])[:3]
        out.append({"name": name, "commit": commit, "message": subject})
    return out


def _status(root: Path, home: str) -> list[dict]:
    parts = _git(root, home, "status", "--porcelain=v1", "-z", "--untracked-files=all").split("\0")
    out, i = [], 0
    while i < len(parts):
        entry = parts[i]
        i += 1
        if len(entry) < 4:
            continue
        item = {"path": entry[3:], "index": entry[0], "worktree": entry[1]}
        if entry[0] in "RC":  # a rename or copy: the next part is where it came from
            item["from"] = parts[i]
            i += 1
        out.append(item)
    return out


def repository(root: Path, rel: str, home: str) -> dict:
    """One repository: HEAD (branch, commit, its message and parents), branches, tags, stashes, the status of
    each changed file, and the repository's own configuration."""
    repo: dict = {"path": rel}
    try:
        branch = _git(root, home, "symbolic-ref", "-q", "--short", "HEAD").strip()
    except RuntimeError:
        branch = None  # detached
    repo["branch"] = branch
    try:
        head = _git(root, home, "log", "-1", "--format=%H%x00%P%x00%B").split("\0")
        repo.update(commit=head[0], parents=head[1].split(), message=head[2].strip())
    except RuntimeError:
        repo.update(commit=None, parents=[], message=None)  # no commit yet
    for field, run in (("branches", lambda: _refs(root, home, "refs/heads")),
                       ("tags", lambda: _refs(root, home, "refs/tags")),
                       ("stashes", lambda: [dict(zip(("commit", "message"), (line.split("\0") + [""])[:2]))
                                            for line in _git(root, home, "stash", "list", "--format=%H%x00%s").splitlines()]),
                       ("changes", lambda: _status(root, home)),
                       ("config", lambda: _config_file(root / ".git" / "config"))):
        try:
            repo[field] = run()
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            repo[field] = {"error": str(e)}
    return repo


def repositories(workspace: Path, home: str) -> list[dict]:
    """Every git repository in the workspace (its folder, and any made inside it), by its folder."""
    found = []
    for folder, dirs, names in os.walk(workspace):
        if ".git" in dirs or ".git" in names:
            rel = os.path.relpath(folder, workspace)
            found.append(repository(Path(folder), rel, home))
        dirs[:] = sorted(d for d in dirs if d not in (".git", "node_modules"))
    return found


# -- the work files' formats (the core calls this for each file in the work folders) ----------------------
def read_file(path: str) -> dict | None:
    p = Path(path)
    suffix = p.suffix.lower()
    try:
        if p.stat().st_size > MAX_TEXT:
            return None
        if suffix in (".json", ".jsonc", ".code-workspace"):
            value, error = _json_file(p)
            return {"json_error": error} if error else {"json": value}
        from mcpworld.sources.workfiles import TEXT_SUFFIXES

        if suffix in TEXT_SUFFIXES:  # the core reads these as text already
            return None
        data = p.read_bytes()
        if b"\0" in data:
            return None
        return {"text": data.decode("utf-8")}
    except (OSError, UnicodeDecodeError):
        return None


MAX_FILES = 2000
SKIP_DIRS = {".git", "node_modules"}


def files(workspace: Path, home: Path) -> list[dict]:
    """The workspace's files and folders (by their path in it) and those in ~/Downloads and ~/Desktop."""
    from mcpworld.sources.workfiles import describe

    out: list[dict] = []
    for root, prefix in ((workspace, ""), (home / "Downloads", "~/Downloads/"), (home / "Desktop", "~/Desktop/")):
        if not root.is_dir():
            continue
        count = 0
        for folder, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            rel = os.path.relpath(folder, root)
            at = "" if rel == "." else rel + "/"
            if at:
                out.append({"path": prefix + at, "kind": "folder"})
            for name in sorted(names):
                count += 1
                if count > MAX_FILES:
                    out.append({"path": f"{prefix}{at}...", "kind": "cut", "error": f"over {MAX_FILES} files"})
                    break
                out.append(describe(Path(folder) / name, prefix + at + name, read_file))
            if count > MAX_FILES:
                break
    return out


def query(ctx) -> dict:
    url = f"http://{ctx.values.app_host}:{ctx.values.port('bridge')}"
    state = Bridge(url, ctx.values.secret("bridge"), "VS Code", timeout=ctx.timeout).call("state", {})
    state.pop("git", None)  # read below, with git itself, for every repository
    user_data = Path(ctx.values.path("user_data"))
    home = ctx.values.home
    workspace = Path(ctx.values.path("workspace"))
    return {
        **state,
        "user_settings": settings_file(user_data / "User" / "settings.json"),
        "machine_settings": settings_file(user_data / "Machine" / "settings.json"),
        "keybindings": keybindings(user_data / "User" / "keybindings.json"),
        "user_files": user_files(user_data / "User"),
        "repositories": repositories(workspace, home),
        "files": files(workspace, Path(home)),
        "read_from": "bridge",
    }
