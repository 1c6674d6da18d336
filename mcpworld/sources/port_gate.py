"""An app server's port that only the app's own client may use (probe_runtime/port_gate.py): the runtime's
gate (root) listens on the port and forwards to the server's Unix socket what the app's client sends, and
every other process that connects (a program the app started for the agent, the agent's bash in a container)
is refused and recorded as `suspected_forgery`. The app's launch command has the server listen on
$MCPWORLD_GATED_SOCKET and waits for that socket, not for the port, before it starts the client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os

from pydantic import Field

from evaluator import events as ev
from evaluator.events import Source
from mcpworld.errors import ConfigError, EnvironmentSetupError
from mcpworld.sources import register
from mcpworld.sources.base import EventSource, SourceConfig

GATED_SOCKET_ENV = "MCPWORLD_GATED_SOCKET"


class PortGateConfig(SourceConfig):
    port: str = Field(description="the app's port (one of `ports`) whose server listens on $MCPWORLD_GATED_SOCKET")


@register
class PortGateSource(EventSource):
    key = "port_gate"
    Config = PortGateConfig

    @classmethod
    def check_app(cls, config, app, file):
        if config.port not in app.ports:
            return [ConfigError(file, "sources.port_gate.port", f"'{config.port}' is not among the app's ports")]
        return []

    async def prepare(self) -> dict[str, str]:
        env, values = self.ctx.env, self.ctx.values
        owner = os.path.dirname(await env.app_private_path("gate"))
        self.gate = await env.spawn_runtime(
            "port_gate", ["--listen", f"{env.bind_host}:{values.port(self.config.port)}", "--owner-of", owner],
            log_name="port-gate", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        try:
            line = await asyncio.wait_for(self.gate.stdout.readline(), 30)
        except asyncio.TimeoutError:
            line = b""
        word, _, socket_path = line.decode(errors="replace").strip().partition(" ")
        if word != "listening" or not socket_path:
            raise EnvironmentSetupError(f"the port gate did not start (see its log): {line[:200]!r}")
        self.reading = asyncio.ensure_future(self._read())
        return {GATED_SOCKET_ENV: socket_path}

    async def _read(self) -> None:
        """The gate's refusals, as the runner's own records (the gate is root's: the agent cannot write them)."""
        while line := await self.gate.stdout.readline():
            try:
                said = json.loads(line)
            except ValueError:
                continue
            if "reason" in said:
                self.ctx.evaluator.record_internal(Source.RUNNER, ev.FORGERY, {"reason": said["reason"],
                                                                               "peer": said.get("peer")})
            elif "counted" in said:
                self.ctx.evaluator.record_internal(Source.RUNNER, ev.FORGERY, {"reason": "port gate: refused again",
                                                                               "counted": said["counted"]})

    async def stop(self) -> None:
        gate = getattr(self, "gate", None)
        if gate is None:
            return
        await self.ctx.env.end_runtime(gate, 10)
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(self.reading, 5)
