"""Frida hooks on the app's native code: the probe runtime's bridge starts next to the app as it launches
(inside its container on the docker backend), attaches once the app has loaded what the hooks need, and
forwards every `mcpworld.emit()` of the hook scripts as a `frida` event. The app's scripts come from
[sources.frida], a task's own from its `frida_scripts`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pydantic import Field

from evaluator import events as ev
from evaluator.events import Source
from mcpworld import paths
from mcpworld.errors import ConfigError
from mcpworld.sources import register
from mcpworld.sources.base import EventSource, SourceConfig, SourceError
from probe_runtime.client import CONFIG_ENV

FAILURES = (ev.HOOK_ERROR, ev.HOOK_MISSING)
SHARED = "hooks/"  # a task's script named from the content root: the app's hooks folder, shared by tasks


def task_script(task_folder: Path, script: str) -> Path:
    """A task's hook script: in its folder, or under the content root when it starts with hooks/."""
    return paths.ROOT / script if script.startswith(SHARED) else task_folder / script


class FridaConfig(SourceConfig):
    scripts: list[str] = Field(min_length=1, description="hook scripts (plain Frida JS) under the content root; "
                               "the bridge attaches to the launched process, so launch the app binary itself")


@register
class FridaSource(EventSource):
    key = "frida"
    Config = FridaConfig

    @classmethod
    def check_app(cls, config, app, file):
        return cls.missing_repo_files(app, file, "sources.frida.scripts", config.scripts)

    @classmethod
    def check_task(cls, config, app, task, file):
        errors = []
        for i, script in enumerate(task.frida_scripts):
            if config is None:
                errors.append(ConfigError(file, f"frida_scripts[{i}]", f"app '{app.id}' has no [sources.frida] to load it"))
            elif not task_script(file.parent, script).is_file():
                errors.append(ConfigError(file, f"frida_scripts[{i}]", f"no file {task_script(file.parent, script)}"))
        return errors

    async def launched(self, app_proc) -> None:
        """Start the bridge beside the app: Python, Frida and its evaluator socket are up by the time the app
        has loaded what the hooks need, and it attaches when ready() says so."""
        ctx, env = self.ctx, self.ctx.env
        config = await env.write_private("frida-run.json", json.dumps(ctx.run_config(Source.FRIDA)), privileged=True)
        scripts = [env.repo_path(ctx.app.repo_file(s)) for s in self.config.scripts]
        scripts += [env.repo_path(task_script(ctx.task_folder, s)) if s.startswith(SHARED) else
                    await env.provide(task_script(ctx.task_folder, s)) for s in ctx.task.frida_scripts]
        args = ["--pid", str(app_proc.pid), "--attach-on-stdin"]
        for script in scripts:
            args += ["--script", script]
        self.proc = await env.spawn_runtime("frida_bridge", args, env={CONFIG_ENV: config}, log_name="frida",
                                            stdin=asyncio.subprocess.PIPE)

    async def ready(self) -> None:
        """Attach; ready once every hook script is loaded without error."""
        evaluator = self.ctx.evaluator
        self.proc.stdin.write(b"attach\n")
        await self.proc.stdin.drain()
        attached = asyncio.ensure_future(evaluator.wait_event(ev.FRIDA_ATTACHED, Source.FRIDA))
        exited = asyncio.ensure_future(self.proc.wait())
        done, _ = await asyncio.wait({attached, exited}, return_when=asyncio.FIRST_COMPLETED)
        for f in (attached, exited):
            f.cancel()
        problems = [e for e in evaluator.log.events if e.source == Source.FRIDA and e.name in FAILURES]
        if problems:
            raise SourceError("Frida hooks failed: " + "; ".join(
                f"{e.name} {e.payload.get('script') or ''} {e.payload.get('description') or e.payload.get('function')}"
                + (f" ({e.payload['hint']})" if e.payload.get("hint") else "") for e in problems))
        if attached not in done:
            raise SourceError(f"the Frida bridge exited with code {self.proc.returncode} before attaching")
