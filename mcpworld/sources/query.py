"""The final state query: after the agent, the app's `query(ctx) -> dict` reads its real state (through
its API while it runs, from its files otherwise) and the result is recorded as one `query` event, which
`success.state` is matched against. It runs on the host, whatever the backend."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import Field

from evaluator import events as ev
from evaluator.events import Source
from mcpworld.config.modules import load_function
from mcpworld.errors import ConfigError
from mcpworld.results import Failure
from mcpworld.sources import register
from mcpworld.sources.base import EventSource, SourceConfig, SourceError
from mcpworld.values import RunValues


class QueryConfig(SourceConfig):
    module: str = Field(description="file in the app folder with a `query(ctx) -> dict` function")
    event: str = "state"
    timeout: float = 30.0
    keys: dict[str, str] = Field(default_factory=dict, description="the key field of each list of records, by "
                                 "its path with [*] for enclosing items (notes by id, notes[*].cards by id): how the "
                                 "start and end states are compared item by item")
    sets: list[str] = Field(default_factory=list, description="lists of plain values compared as sets, value "
                            "by value (a tag list)")
    ignore: list[str] = Field(default_factory=list, description="top-level fields that are not the app's state "
                              "(derived counts, where it was read from): never a change")
    fields: dict[str, str] = Field(default_factory=dict, description="the state's top-level fields and what each "
                                   "holds: what a task's expected changes and tolerances may name")
    work_dirs: list[str] = Field(default_factory=list, description="folders the tasks work in ('{home}/Documents'): "
                                 "every file in them joins the state as `files` (by path under the home), read as "
                                 "its format is read (mcpworld.sources.workfiles)")
    work_ignore: list[str] = Field(default_factory=list, description="globs of files in the work folders that are the "
                                   "app's own bookkeeping (a backup, a lock file), never part of the state")


@dataclass
class QueryContext:
    """What an app's state query gets: the run's values as the host sees them, whether the app is up, and how
    a path the app reports (inside its environment) maps to the host."""

    values: RunValues
    app_alive: bool
    timeout: float
    host_path: Callable[[str], str]


WORK_FILES = "files"  # the state's field for the work folders' files, keyed by path


@register
class StateQuerySource(EventSource):
    key = "state_query"
    Config = QueryConfig
    failure = Failure.PROBE_ERROR

    @classmethod
    def wanted(cls, config, task) -> bool:
        return config is not None and task.state_query

    @classmethod
    def check_app(cls, config, app, file):
        target = app.folder / config.module
        return [] if target.is_file() else [ConfigError(file, "sources.state_query.module", f"no file {target}")]

    @classmethod
    def check_task(cls, config, app, task, file):
        if task.success.state and not cls.wanted(config, task):
            return [ConfigError(file, "success.state", f"needs a state query, but app '{app.id}' has none or the "
                                "task disables it")]
        return []

    @classmethod
    def events(cls, config, app, task):
        return {config.event: Source.QUERY}

    async def begin(self) -> None:
        """The state before the agent acts (recorded before anything counts): what the end is compared with."""
        await self.collect()

    async def collect(self) -> None:
        ctx, config = self.ctx, self.config
        alive = ctx.app_alive()
        try:
            query = load_function(ctx.app.folder / config.module, "query", ctx.app.folder / "app.toml",
                                  "sources.state_query.module")
            qctx = QueryContext(ctx.values.on_host(ctx.env.host_path), alive, config.timeout, ctx.env.host_path)
            payload = await asyncio.wait_for(asyncio.to_thread(query, qctx), config.timeout + 5)
        except Exception as e:
            detail = f"{type(e).__name__}: {e}"
            ctx.evaluator.record_internal(Source.RUNNER, ev.SOURCE_ERROR, {"source": self.key, "error": detail})
            raise SourceError(f"state query failed: {detail}") from None
        if config.work_dirs:
            payload = {**payload, WORK_FILES: await asyncio.to_thread(self._work_files)}
        ctx.evaluator.record_internal(Source.QUERY, config.event, payload)

    def _work_files(self) -> list[dict]:
        from pathlib import Path

        from mcpworld.sources.workfiles import read_work_files

        ctx, config = self.ctx, self.config
        home = Path(ctx.env.host_path(ctx.values.home))
        dirs = [Path(ctx.env.host_path(ctx.values.expand(d))) for d in config.work_dirs]
        module = ctx.app.folder / config.module
        try:
            reader = load_function(module, "read_file", ctx.app.folder / "app.toml", "sources.state_query.module")
        except ConfigError:
            reader = None  # the app reads no format of its own
        return read_work_files(dirs, home, config.work_ignore, reader)
