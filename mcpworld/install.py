"""Install what apps need (Debian packages, PyPI packages), from each app's [install] section."""

from __future__ import annotations

import os
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
    if not app.install.check:
        return True
    values = {"python": sys.executable, "bindir": os.path.dirname(sys.executable)}
    argv = [expand(a, values) for a in app.install.check]
    try:
        return subprocess.run(argv, capture_output=True, timeout=120).returncode == 0 and not missing_debs(app.install.apt)
    except (OSError, subprocess.TimeoutExpired):
        return False


def install_app(app: AppConfig, log=print) -> None:
    apt_install(app.install.apt, log)
    if app.install.pip:
        log(f"pip install {' '.join(app.install.pip)}")
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *app.install.pip], check=True)
