"""The `mcpworld` command line: one module per command group, assembled here."""

from __future__ import annotations

import signal

import typer

from mcpworld.cli import apps, bench, hooks, ray, report, run, tasks

app = typer.Typer(no_args_is_help=True, add_completion=False, help="A white-box testbed for computer-use agents.")


def _terminate_as_interrupt(signum, frame) -> None:
    # SIGTERM (a scheduler's, `kill`'s) stops a command as Ctrl-C does: the running trials are torn down and
    # recorded as interrupted, for --resume to run again; by default it would end the runner on the spot and
    # leave the apps running and the trials unrecorded
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):  # asyncio.run's own (it cancels the main task), or Python's (KeyboardInterrupt)
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


@app.callback()
def _on_start() -> None:
    signal.signal(signal.SIGTERM, _terminate_as_interrupt)

run.register(app)
report.register(app)
app.add_typer(tasks.app, name="tasks")
app.add_typer(apps.app, name="apps")
app.add_typer(apps.images, name="images")
app.add_typer(bench.app, name="bench")
app.add_typer(hooks.app, name="hooks")
app.add_typer(ray.app, name="ray")

__all__ = ["app"]
