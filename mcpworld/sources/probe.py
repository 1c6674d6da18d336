"""An in-app probe: code that runs inside the app (an add-on, a plug-in, a startup script) and sends the
app's milestones over the authenticated websocket with the probe runtime's client.

The probe finds its one-time run config through $MCPWORLD_PROBE_CONFIG and deletes the file as it
reads it; the trial refuses to start the agent while the file still exists. An app the agent restarts
gets the config again, so its probe can authenticate again.

With `relay = true` the probe never holds the secret: the probe runtime's relay (probe_runtime/relay.py)
runs as root beside the app, holds it, and forwards the events of the app's probe processes that reach its
socket ($MCPWORLD_PROBE_RELAY) and pass its check of who they are. For a probe whose host process cannot
hide its memory from the app user's other programs before our code runs, and for apps that start a second
probe process of their own (a second window's extension host).
"""

from __future__ import annotations

import asyncio
import json

from pydantic import Field

from evaluator import events as ev
from evaluator.events import Source
from mcpworld.config.app import CopySpec
from mcpworld.errors import ConfigError
from mcpworld.install import not_dumpable_addon
from mcpworld.sources import register
from mcpworld.sources.base import EventSource, SourceConfig, SourceError
from probe_runtime.client import CONFIG_ENV

CONFIG_FILE = "probe-run.json"
RELAY_ENV = "MCPWORLD_PROBE_RELAY"
NOT_DUMPABLE_ENV = "MCPWORLD_NOT_DUMPABLE"
RELAY_SOCKET = "probe-relay.sock"


class ProbeConfig(SourceConfig):
    files: list[CopySpec] = Field(default_factory=list, description="the probe's files, placed after the snapshot "
                                  "({runtime}/client.py is the runtime's websocket client)")
    relay: bool = Field(False, description="the probe talks to the runtime's relay (a root process that holds the "
                        "secret and admits the app's probe processes by what the kernel says of them) instead of "
                        "holding the secret itself")


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
        self.relay = None
        # a probe on the app's own Node loads the runtime's addon to make its process non-dumpable
        addon = {NOT_DUMPABLE_ENV: str(not_dumpable_addon(ctx.app))} if ctx.app.install.node else {}
        if self.config.relay:
            return {RELAY_ENV: await self._start_relay(), **addon}
        self.config_path = await self._write_config()
        ctx.evaluator.subscribe(self._rearm_on_disconnect)
        return {CONFIG_ENV: self.config_path, **addon}

    async def _start_relay(self) -> str:
        env = self.ctx.env
        config = await env.write_private("probe-relay.json", json.dumps(self.ctx.run_config(Source.PROBE)),
                                         privileged=True)
        socket_path = await env.app_private_path(RELAY_SOCKET)
        # the probe's own files, as placed: a peer is admitted only while they are unchanged
        seals = [arg for f in self.config.files for arg in ("--seal", self.ctx.values.expand(f.to))]
        self.relay = await env.spawn_runtime("relay", ["--socket", socket_path, *seals], env={CONFIG_ENV: config},
                                             log_name="probe-relay", stdin=asyncio.subprocess.PIPE)
        return socket_path

    async def _write_config(self) -> str:
        return await self.ctx.env.write_private(CONFIG_FILE, json.dumps(self.ctx.run_config(Source.PROBE)))

    async def ready(self) -> None:
        await self.ctx.evaluator.wait_event(ev.PROBE_CONNECTED, Source.RUNNER,
                                            where=lambda e: e.payload.get("source") == Source.PROBE)
        if self.relay is None and await self.ctx.env.path_kind(self.config_path) is not None:
            # the probe must have consumed (read and deleted) the secret before the agent starts
            raise SourceError("the probe connected but did not delete its run config")

    def _rearm_on_disconnect(self, event) -> None:
        if event.source == Source.RUNNER and event.name == ev.PROBE_DISCONNECTED and not self.ctx.tearing_down():
            self._rearming = asyncio.ensure_future(self._write_config())

    async def stop(self) -> None:
        if self._rearming is not None and not self._rearming.done():
            self._rearming.cancel()
        if self.relay is not None:  # it sends what the evaluator has not acknowledged, then exits
            await self.ctx.env.end_runtime(self.relay, 15)

