"""`mcpworld apps ...` (list, install, build the snapshots) and `mcpworld images ...` (container images)."""

from __future__ import annotations

import subprocess
import sys

import typer
from rich.table import Table

from mcpworld import paths
from mcpworld.cli.common import console, err, fail, load
from mcpworld.errors import ConfigErrors, MCPWorldError

app = typer.Typer(no_args_is_help=True, help="List and install apps, build their snapshots.")
images = typer.Typer(no_args_is_help=True, help="Build and list the container images (--backend docker).")


def _apps(app_ids: list[str]) -> list:
    from mcpworld.config.load import load_apps

    try:
        apps = load_apps()
    except ConfigErrors as e:
        fail(str(e))
    unknown = [a for a in app_ids if a not in apps]
    if unknown:
        fail(f"unknown app {', '.join(unknown)} (known: {', '.join(apps)})")
    return [a for a in apps.values() if not app_ids or a.id in app_ids]


@app.command("list")
def apps_list():
    """The apps, whether each is installed here, and its task count."""
    from mcpworld.install import is_installed

    apps, tasks = load()
    table = Table()
    for col in ("app", "name", "installed", "tasks", "MCP servers", "sources"):
        table.add_column(col)
    for a in apps.values():
        table.add_row(a.id, a.name, "yes" if is_installed(a) else "no", str(sum(rt.app.id == a.id for rt in tasks.values())),
                      ", ".join(a.mcp_servers) or "-", ", ".join(a.sources) or "-")
    console.print(table)


@app.command("install")
def apps_install(app_id: list[str] = typer.Option([], "--app", help="default: every app")):
    """Install what each app needs: its Debian and PyPI packages and its MCP servers' packages (skips what is there)."""
    from mcpworld.install import install_app, is_installed

    for a in _apps(app_id):
        if is_installed(a):
            err.print(f"{a.id}: installed")
            continue
        install_app(a, log=lambda m, a=a: err.print(f"{a.id}: {m}"))
        if not is_installed(a):
            fail(f"{a.id}: still not usable after installing", 1)
        err.print(f"{a.id}: installed")
    from mcpworld.envs.users import prepare

    prepare(log=err.print)  # who runs the apps and the agent's tools on the local backend


@app.command("snapshots")
def apps_snapshots(app_id: list[str] = typer.Option([], "--app", help="default: every app")):
    """Build each app's snapshots from what is installed (snapshots/<app>/build.py)."""
    for a in _apps(app_id):
        builder = paths.SNAPSHOTS_DIR / a.id / "build.py"
        if not builder.is_file():
            err.print(f"{a.id}: no snapshot builder ({builder})")
            continue
        err.print(f"{a.id}: {builder}")
        if subprocess.run([sys.executable, str(builder)], cwd=paths.ROOT).returncode != 0:
            fail(f"{a.id}: {builder} failed", 1)


@images.command("build")
def images_build(desktop: list[str] = typer.Option(["xfce"], "--desktop", help="xfce or kde (repeatable)"),
                 app_id: list[str] = typer.Option([], "--app", help="app layers to build (default: every app)"),
                 base: str = typer.Option("auto", help="base image: 'auto' (debian:bookworm from a registry, else "
                                                       "debootstrap of this machine's apt mirror), 'debootstrap', or an image name"),
                 force: bool = typer.Option(False, help="rebuild even if the inputs did not change")):
    """Build the desktop images and app layers; each is skipped while its inputs are unchanged."""
    from mcpworld import images as imgs

    chosen = _apps(app_id)
    client = imgs.docker_client()
    try:
        built = imgs.build_all(client, desktop, chosen, base, log=lambda m: err.print(m, highlight=False), force=force)
    except imgs.ImageBuildError as e:
        fail(str(e), 1)
    table = Table("image", "size", "build")
    for b in built:
        table.add_row(b.tag, f"{b.size_mb:.0f} MB", "cached" if b.cached else f"{b.seconds:.0f}s")
    console.print(table)


@images.command("engine")
def images_engine():
    """Make sure a Docker engine answers: start dockerd if it is installed but not running."""
    from mcpworld import images as imgs

    try:
        imgs.start_engine(log=lambda m: err.print(m, highlight=False))
    except MCPWorldError as e:
        fail(str(e), 1)
    console.print("Docker engine: ok")


@images.command("list")
def images_list():
    """The mcpworld images this Docker engine has."""
    from mcpworld import images as imgs

    table = Table("image", "size", "created", "inputs")
    for row in imgs.describe(imgs.docker_client()):
        table.add_row(row["tag"], f"{row['size_mb']} MB", row["created"], row["inputs"])
    console.print(table)
