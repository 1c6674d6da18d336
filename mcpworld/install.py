"""Install what apps need, from each app's config: its Debian and PyPI packages ([install]) and its MCP
servers' own PyPI packages (they run on the host, in mcpworld's environment)."""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys

from mcpworld.config.app import AppConfig
from mcpworld.config.templating import expand


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
    if any(pip_version(r) is None for r in server_requirements(app)):
        return False
    if not app.install.check:
        return not missing_debs(app.install.apt)
    values = {"python": sys.executable, "bindir": os.path.dirname(sys.executable)}
    argv = [expand(a, values) for a in app.install.check]
    try:
        return subprocess.run(argv, capture_output=True, timeout=120).returncode == 0 and not missing_debs(app.install.apt)
    except (OSError, subprocess.TimeoutExpired):
        return False


def app_version(app: AppConfig) -> str | None:
    """The installed version of the app's `install.package` (PyPI if the app pip-installs it, else Debian)."""
    pkg = app.install.package
    if pkg is None:
        return None
    if any(_dist_name(r) == pkg for r in app.install.pip):
        return pip_version(pkg)
    return deb_version(pkg)


def install_app(app: AppConfig, log=print) -> None:
    apt_install(app.install.apt, log)
    pip = [*app.install.pip, *server_requirements(app)]
    if pip:
        log(f"pip install {' '.join(pip)}")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *pip], check=True)
