"""The `mcpworld` command line: one module per command group, assembled here."""

from __future__ import annotations

import typer

from mcpworld.cli import apps, bench, hooks, ray, report, run, tasks

app = typer.Typer(no_args_is_help=True, add_completion=False, help="A white-box testbed for computer-use agents.")
run.register(app)
report.register(app)
app.add_typer(tasks.app, name="tasks")
app.add_typer(apps.app, name="apps")
app.add_typer(apps.images, name="images")
app.add_typer(bench.app, name="bench")
app.add_typer(hooks.app, name="hooks")
app.add_typer(ray.app, name="ray")

__all__ = ["app"]
