"""What the command modules share: the consoles, loading apps and tasks, choosing tasks, clean errors."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import typer
from rich.console import Console

from mcpworld import paths
from mcpworld.config.load import load_apps, load_tasks
from mcpworld.errors import ConfigErrors

console = Console(emoji=False)  # ids such as near_miss:two_x are text, not ":two:" emoji codes
err = Console(stderr=True, emoji=False)


def fail(message: str, code: int = 2) -> NoReturn:
    err.print(f"[red]error[/red] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def load(tasks_dir: Path | None = None):
    """Every app and task, or exit 2 listing every problem (file: field: problem)."""
    try:
        apps = load_apps()
        return apps, load_tasks(tasks_dir or paths.TASKS_DIR, apps)
    except ConfigErrors as e:
        for x in e.errors:
            err.print(f"[red]error[/red] {x}", highlight=False, soft_wrap=True)
        raise typer.Exit(2)


def select(tasks: dict, task_ids: list[str], app_ids: list[str]) -> list:
    """The chosen tasks (all when nothing is named), or exit 2 naming what is unknown."""
    if not task_ids and not app_ids:
        return list(tasks.values())
    chosen = []
    for t in task_ids:
        if t not in tasks:
            fail(f"unknown task '{t}' (e.g. {', '.join(list(tasks)[:5])})")
        chosen.append(tasks[t])
    for a in app_ids:
        found = [rt for rt in tasks.values() if rt.app.id == a and rt not in chosen]
        if not found and not any(rt.app.id == a for rt in chosen):
            fail(f"no tasks for app '{a}'")
        chosen.extend(found)
    return chosen


def check_available(app) -> None:
    """Exit 2 naming the reason if the app is declared unavailable (nothing of it can be started)."""
    if not app.available:
        fail(f"{app.name} is unavailable: {app.unavailable_reason}")


def check_modes(modes: list[str]) -> None:
    from gateway.modes import MODES

    for m in modes:
        if m not in MODES:
            fail(f"--mode '{m}' is not one of {', '.join(MODES)}")


def check_backend(backend: str) -> None:
    from mcpworld.envs import BACKENDS

    if backend not in BACKENDS:
        fail(f"--backend '{backend}' is not one of {', '.join(BACKENDS)}")
    if backend == "docker":  # one clear error up front, not a setup error in every trial
        from mcpworld.errors import MCPWorldError
        from mcpworld.images import docker_client

        try:
            docker_client()
        except MCPWorldError as e:
            fail(str(e))
