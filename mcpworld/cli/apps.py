"""`mcpworld apps ...` (list, install, build the snapshots) and `mcpworld images ...` (container images)."""

from __future__ import annotations

import os
import subprocess
import sys

import typer
from rich import progress
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


def _available(apps: list, strict: bool = False) -> list:
    """The apps that can be installed here; each one declared unavailable is skipped, saying why (with
    `strict`, an app named on the command line, refused)."""
    for a in apps:
        if not a.available:
            if strict:
                fail(f"{a.id} is unavailable: {a.unavailable_reason}")
            err.print(f"{a.id}: skipped, unavailable: {a.unavailable_reason}", highlight=False)
    return [a for a in apps if a.available]


@app.command("list")
def apps_list():
    """The apps, whether each is installed here (or why it cannot be), and its task count."""
    from mcpworld.install import is_installed

    apps, tasks = load()
    table = Table()
    for col in ("app", "name", "installed", "tasks", "MCP servers", "sources"):
        table.add_column(col)
    for a in apps.values():
        installed = ("yes" if is_installed(a) else "no") if a.available else f"unavailable: {a.unavailable_reason}"
        table.add_row(a.id, a.name, installed, str(sum(rt.app.id == a.id for rt in tasks.values())),
                      ", ".join(a.mcp_servers) or "-", ", ".join(a.sources) or "-")
    console.print(table)


@app.command("install")
def apps_install(app_id: list[str] = typer.Option([], "--app", help="default: every app")):
    """Install what each app needs: its Debian and PyPI packages and its MCP servers' packages (skips what is there)."""
    from mcpworld.install import install_app, is_installed

    for a in _available(_apps(app_id), strict=bool(app_id)):
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
    for a in _available(_apps(app_id)):
        builder = paths.SNAPSHOTS_DIR / a.id / "build.py"
        if not builder.is_file():
            err.print(f"{a.id}: no snapshot builder ({builder})")
            continue
        err.print(f"{a.id}: {builder}")
        if subprocess.run([sys.executable, str(builder)], cwd=paths.ROOT).returncode != 0:
            fail(f"{a.id}: {builder} failed", 1)


@app.command("build")
def apps_build(app_id: list[str] = typer.Argument(None, help="apps (default: every app whose app.toml has a build table)"),
               from_source: bool = typer.Option(False, "--from-source", help="build the app's Debian source package "
                                                "(the only kind of build there is; say it)"),
               package: str | None = typer.Option(None, help="a Debian source package that no app names, to try a build"),
               debug: bool = typer.Option(True, "--debug/--no-debug", help="-O0 -g and symbol tables kept (the "
                                          "default), or the package's own flags"),
               jobs: int = typer.Option(os.cpu_count() or 1, min=1, help="parallel compile jobs")):
    """Build apps from source with debug information into builds/<package>_<version>_<flags>/ (bin/, lib/,
    share/), cached by source version and flags; `--app-build` runs a trial on it."""
    from mcpworld import build as builds

    if not from_source:
        fail("say --from-source: a build is the app's Debian source package, built here")
    if package:
        targets = [(package, package)]
    else:
        chosen = [a for a in _apps(app_id or []) if a.build or app_id]
        missing = [a.id for a in chosen if not a.build]
        if missing:
            fail(f"{', '.join(missing)}: no [build] table in app.toml (its Debian source package)")
        targets = [(a.id, a.build.source) for a in chosen]
        if not targets:
            err.print("no app declares a source build (a build table in its app.toml)")
            return
    table = Table("build", "folder", "time", "size")
    for name, source in targets:
        with progress.Progress(progress.SpinnerColumn(), progress.TextColumn("{task.description}"),
                               progress.TimeElapsedColumn(), console=err, transient=True) as bar:
            task = bar.add_task(f"{name}: starting")
            builder = builds.SourceBuild(source, builds.BuildOptions(debug=debug, jobs=jobs))
            builder.on_step = lambda s, name=name, task=task: bar.update(task, description=f"{name}: {s}")
            builder.on_line = lambda line, name=name, task=task, b=builder: bar.update(
                task, description=f"{name}: {b.step}: {line[-60:]}")
            try:
                folder, info, cached = builder.run()
            except MCPWorldError as e:
                fail(f"{name}: {e}", 1)
        table.add_row(info.describe(), str(folder), "cached" if cached else f"{info.seconds:.0f}s",
                      f"{info.size_bytes / 1e6:.1f} MB")
    console.print(table)


@images.command("build")
def images_build(desktop: list[str] = typer.Option(["xfce"], "--desktop", help="xfce or kde (repeatable)"),
                 app_id: list[str] = typer.Option([], "--app", help="app layers to build (default: every app)"),
                 base: str = typer.Option("auto", help="base image: 'auto' (debian:bookworm from a registry, else "
                                                       "debootstrap of this machine's apt mirror), 'debootstrap', or an image name"),
                 force: bool = typer.Option(False, help="rebuild even if the inputs did not change")):
    """Build the desktop images and app layers; each is skipped while its inputs are unchanged."""
    from mcpworld import images as imgs

    chosen = _available(_apps(app_id), strict=bool(app_id))
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
