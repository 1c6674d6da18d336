"""File milestones: the evaluator's inotify watcher turns a task's watched paths into `fs` events.
Declared by tasks (`file_milestones`), not by apps; it watches from the host (a container's home is a
host folder mounted in)."""

from __future__ import annotations

import asyncio

from evaluator.events import Source
from evaluator.fswatch import FileWatcher, Watch
from mcpworld.config.templating import check_placeholders
from mcpworld.sources import register
from mcpworld.sources.base import EventSource


@register
class FileSource(EventSource):
    key = "files"

    @classmethod
    def wanted(cls, config, task) -> bool:
        return bool(task.file_milestones)

    @classmethod
    def events(cls, config, app, task):
        return {fm.event: Source.FS for fm in task.file_milestones}

    @classmethod
    def check_task(cls, config, app, task, file):
        from mcpworld.values import ENV_PLACEHOLDERS

        known = set(ENV_PLACEHOLDERS) | set(app.paths)
        return [e for i, fm in enumerate(task.file_milestones)
                for e in check_placeholders(fm.path, known, file, f"file_milestones[{i}].path", "paths")]

    async def prepare(self) -> dict[str, str]:
        ctx = self.ctx
        loop = asyncio.get_running_loop()
        self.watcher = FileWatcher(
            [Watch(fm.event, ctx.env.host_path(ctx.values.expand(fm.path)), tuple(fm.kinds)) for fm in ctx.task.file_milestones],
            lambda name, payload: loop.call_soon_threadsafe(ctx.evaluator.record_internal, Source.FS, name, payload))
        self.watcher.start()
        return {}

    async def stop(self) -> None:
        if getattr(self, "watcher", None) is not None:
            self.watcher.stop()
