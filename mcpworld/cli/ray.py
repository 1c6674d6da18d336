"""`mcpworld ray`: what a machine offers the Ray cluster it joins."""

from __future__ import annotations

import typer

from mcpworld.cli.common import console, load

app = typer.Typer(no_args_is_help=True, help="Ray clusters: what each node offers (`mcpworld run --executor ray`).")


@app.command("resources")
def resources(envs: int = typer.Option(2, min=1, help="environments this node holds at once")):
    """The resources to start this node with: `ray start ... --resources "$(mcpworld ray resources)"`
    (environment slots, every installed app, Docker if its engine answers)."""
    from mcpworld.ray_executor import local_resources_json

    apps, _ = load()
    console.print(local_resources_json(apps.values(), envs), highlight=False, soft_wrap=True)
