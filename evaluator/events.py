"""The one event model. The same JSON travels over the websocket and lands in events.jsonl."""

from __future__ import annotations

import time
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

EVENT_LOG_VERSION = 1



class Source(StrEnum):
    """Where an event comes from. Probes and the Frida bridge connect over the websocket; the file
    watcher, the state query and the runner record through the evaluator directly."""

    PROBE = "probe"
    FRIDA = "frida"
    FS = "fs"
    QUERY = "query"
    RUNNER = "runner"


CLIENT_SOURCES = frozenset({Source.PROBE, Source.FRIDA})   # may authenticate over the websocket
COUNTING_SOURCES = frozenset({Source.PROBE, Source.FRIDA, Source.FS, Source.QUERY})  # may reach a key step


class Event(BaseModel):
    """A milestone reported by the app (probe/frida), the file watcher, a state query or the runner."""

    model_config = ConfigDict(extra="forbid")

    v: int = EVENT_LOG_VERSION
    run_id: str
    source: Source
    app: str
    name: str
    payload: dict[str, Any] = Field(default_factory=dict)
    seq: int = Field(ge=0, description="monotonic per stream (one stream per connected client)")
    ts: float = Field(default_factory=time.time, description="wall-clock time the event fired")
    stream: str = Field(default="", description="the client stream this event came from")
    received: float | None = Field(default=None, description="wall-clock time the evaluator recorded it")


# Runner-level event names (source "runner"): recorded through the same log.
FORGERY = "suspected_forgery"
PROBE_CONNECTED = "probe_connected"
PROBE_DISCONNECTED = "probe_disconnected"
SOURCE_ERROR = "source_error"
# Frida bridge events (source "frida"), see probe_runtime/frida_bridge.py
FRIDA_ATTACHED = "frida_attached"
FRIDA_DETACHED = "frida_detached"
HOOK_ERROR = "hook_error"
HOOK_MISSING = "hook_missing"
# what an in-app probe reports when its own code raised (payload: where, trace)
PROBE_ERROR = "probe_error"
# what a probe or hook reports before code it did not ship runs inside the app (a console's input, a script,
# an add-on install), or instead of running it (payload: surface, code, blocked): the trial is never a pass
CODE_RUN = "code_run"
