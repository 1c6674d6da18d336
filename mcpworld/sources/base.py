"""The event-source interface: how the in-app probe, the Frida bridge, the file watcher and the state query
(and any new one: an injected JavaScript probe, a probe an app starts with its own --python) take part in
a trial. Each is one class with the same small lifecycle; the trial calls it, never the other way round.

    prepare()     after the snapshot restore, before the app starts: place files, write the run config,
                  start watching; returns variables the app's launch needs
    launched(p)   the app's process exists (start a helper next to it)
    ready()       awaited in order once the app's window is up (and its port): the source delivers events
    begin()       once set-up is done, just before the agent acts (the state it starts from)
    collect()     after the agent: a last contribution (the final state)
    stop()        release everything; called once, whatever happened

A failure in prepare/launched/ready/begin is a set-up error (the agent never starts); in collect it is the
source's own `failure` category. Each class declares its app.toml table (`Config`) and checks its part
of a task when the task is loaded, before any environment starts.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from evaluator.events import Source
from mcpworld.errors import ConfigError, MCPWorldError
from mcpworld.results import Failure

if TYPE_CHECKING:
    from evaluator.server import Evaluator
    from mcpworld.config.app import AppConfig
    from mcpworld.config.task import Task
    from mcpworld.envs.base import Environment
    from mcpworld.values import RunValues


class SourceConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class SourceError(MCPWorldError):
    """A source could not do its part (its class's `failure` says how the trial counts it)."""


@dataclass
class TrialContext:
    """What a source sees of its trial."""

    app: AppConfig
    task: Task
    task_folder: Path
    env: Environment
    evaluator: Evaluator
    values: RunValues
    run_id: str
    app_alive: Callable[[], bool]
    tearing_down: Callable[[], bool]

    def run_config(self, source: Source) -> dict[str, Any]:
        """The one-time run config a probe or bridge authenticates with (it deletes the file as it reads it):
        a fresh credential for `source`, good for that one client."""
        return {"url": self.evaluator.url, "token": self.evaluator.credential(source), "run_id": self.run_id,
                "app": self.app.id,
                "ports": dict(self.values.ports), "secrets": dict(self.values.secrets), "bind_host": self.env.bind_host}


class EventSource(abc.ABC):
    key: ClassVar[str]                                  # its table in app.toml: [sources.<key>]
    Config: ClassVar[type[SourceConfig] | None] = None  # that table's schema; None: not declared by apps
    failure: ClassVar[Failure] = Failure.PROBE_ERROR

    def __init__(self, config: SourceConfig | None, ctx: TrialContext):
        self.config, self.ctx = config, ctx

    # -- checked when apps and tasks load ------------------------------------------------
    @classmethod
    def wanted(cls, config: SourceConfig | None, task: Task) -> bool:
        """Whether a trial of this task runs the source (by default: the app declares it)."""
        return config is not None

    @classmethod
    def check_app(cls, config: SourceConfig, app: AppConfig, file: Path) -> list[ConfigError]:
        return []

    @staticmethod
    def missing_repo_files(app: AppConfig, file: Path, field: str, refs: list[str]) -> list[ConfigError]:
        """An error for each file the app's table names (`field[i]`) that is not in the repository."""
        return [ConfigError(file, f"{field}[{i}]", f"no such file or folder {app.repo_file(r)}")
                for i, r in enumerate(refs) if not app.repo_file(r).exists()]

    @classmethod
    def check_task(cls, config: SourceConfig | None, app: AppConfig, task: Task, file: Path) -> list[ConfigError]:
        """Problems with what the task asks of this source (called whether or not the app declares it)."""
        return []

    @classmethod
    def events(cls, config: SourceConfig | None, app: AppConfig, task: Task) -> dict[str, Source]:
        """Event names this source adds for the task (beyond the app's declared events), with their source."""
        return {}

    # -- the lifecycle ----------------------------------------------------------------------
    async def prepare(self) -> dict[str, str]:
        return {}

    async def launched(self, app_proc) -> None:
        pass

    async def ready(self) -> None:
        pass

    async def begin(self) -> None:
        pass

    async def collect(self) -> None:
        pass

    async def stop(self) -> None:
        pass
