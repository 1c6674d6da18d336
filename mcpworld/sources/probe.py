"""An in-app probe: code that runs inside the app (an add-on, a plug-in, a startup script) and sends the
app's milestones over the authenticated websocket with the probe runtime's client.

The probe finds its one-time run config through $MCPWORLD_PROBE_CONFIG and deletes the file as it
reads it; the trial refuses to start the agent while the file still exists. An app the agent restarts
gets the config again, so its probe can authenticate again.
"""

from __future__ import annotations

import asyncio
import json

from pydantic import Field

from evaluator import events as ev
from evaluator.events import Source
from mcpworld.config.app import CopySpec
from mcpworld.errors import ConfigError
from mcpworld.sources import register
from mcpworld.sources.base import EventSource, SourceConfig, SourceError
from probe_runtime.client import CONFIG_ENV

CONFIG_FILE = "probe-run.json"


class ProbeConfig(SourceConfig):
    files: list[CopySpec] = Field(default_factory=list, description="the probe's files, placed after the snapshot "
                                  "({runtime}/client.py is the runtime's websocket client)")


@register
class ProbeSource(EventSource):
    key = "probe"
    Config = ProbeConfig

    @classmethod
    def check_app(cls, config, app, file):
        return [ConfigError(file, e.field + ".from", e.problem) for e in
                cls.missing_repo_files(app, file, "sources.probe.files", [f.from_ for f in config.files])]

    async def prepare(self) -> dict[str, str]:
        ctx = self.ctx
        for f in self.config.files:
            await ctx.env.restore(ctx.app.repo_file(f.from_), ctx.values.expand(f.to))
        self._rearming: asyncio.Future | None = None
        self.config_path = await self._write_config()
        ctx.evaluator.subscribe(self._rearm_on_disconnect)
        return {CONFIG_ENV: self.config_path}

    async def _write_config(self) -> str:
        return await self.ctx.env.write_private(CONFIG_FILE, json.dumps(self.ctx.run_config(Source.PROBE)))

    async def ready(self) -> None:
        await self.ctx.evaluator.wait_event(ev.PROBE_CONNECTED, Source.RUNNER,
                                            where=lambda e: e.payload.get("source") == Source.PROBE)
        if await self.ctx.env.path_kind(self.config_path) is not None:
            # the probe must have consumed (read and deleted) the secret before the agent starts
            raise SourceError("the probe connected but did not delete its run config")

    def _rearm_on_disconnect(self, event) -> None:
        if event.source == Source.RUNNER and event.name == ev.PROBE_DISCONNECTED and not self.ctx.tearing_down():
            self._rearming = asyncio.ensure_future(self._write_config())

    async def stop(self) -> None:
        if self._rearming is not None and not self._rearming.done():
            self._rearming.cancel()

