"""Event sources, registered by their app.toml key. A new kind of source is one module here with one
registered class (see base.py for the lifecycle); the trial and the loaders only go through this registry."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from evaluator.events import Source
from mcpworld.config.errors import loc_str
from mcpworld.errors import ConfigError
from mcpworld.sources.base import EventSource, SourceConfig, SourceError, TrialContext

if TYPE_CHECKING:
    from mcpworld.config.app import AppConfig
    from mcpworld.config.task import Task

SOURCES: dict[str, type[EventSource]] = {}


def register(cls: type[EventSource]) -> type[EventSource]:
    """Checked at registration, not at first use: a unique key and a config model (or none)."""
    key = getattr(cls, "key", None)
    if not key or not key.isidentifier():
        raise TypeError(f"event source {cls.__name__}: `key` must be an identifier, not {key!r}")
    if key in SOURCES:
        raise TypeError(f"two event sources with key '{key}': {SOURCES[key].__name__} and {cls.__name__}")
    if cls.Config is not None and not issubclass(cls.Config, SourceConfig):
        raise TypeError(f"event source {cls.__name__}: Config must subclass SourceConfig")
    SOURCES[key] = cls
    return cls


def validate_app_sources(app: AppConfig, file: Path) -> list[ConfigError]:
    """Replace each [sources.<key>] table of the app with its validated config; the problems found."""
    errors: list[ConfigError] = []
    declarable = {k for k, c in SOURCES.items() if c.Config is not None}
    for key, raw in list(app.sources.items()):
        cls = SOURCES.get(key)
        if cls is None or cls.Config is None:
            errors.append(ConfigError(file, f"sources.{key}", f"unknown event source (known: {', '.join(sorted(declarable))})"))
            continue
        try:
            config = cls.Config.model_validate(raw or {})
        except ValidationError as e:
            errors += [ConfigError(file, f"sources.{key}.{loc_str(x['loc'])}".rstrip("."), x["msg"]) for x in e.errors()]
            continue
        app.sources[key] = config
        errors += cls.check_app(config, app, file)
    return errors


def configs(app: AppConfig) -> dict[str, SourceConfig | None]:
    """Every registered source with the app's config for it (None where the app declares none)."""
    return {key: app.sources.get(key) for key in SOURCES}


def task_events(app: AppConfig, task: Task) -> dict[str, str]:
    """Every event a trial of this task can record, with where it comes from."""
    known: dict[str, str] = {name: "app" for name in app.events}
    for key, cls in SOURCES.items():
        config = app.sources.get(key)
        if cls.wanted(config, task):
            known.update({name: str(src) for name, src in cls.events(config, app, task).items()})
    return known


def check_task(app: AppConfig, task: Task, file: Path) -> list[ConfigError]:
    errors: list[ConfigError] = []
    for key, cls in SOURCES.items():
        errors += cls.check_task(app.sources.get(key), app, task, file)
    return errors


def for_trial(ctx: TrialContext) -> list[EventSource]:
    """The sources a trial runs, in the order the app declares them (then the undeclared ones)."""
    order = list(ctx.app.sources) + [k for k in SOURCES if k not in ctx.app.sources]
    out = []
    for key in order:
        cls, config = SOURCES[key], ctx.app.sources.get(key)
        if cls.wanted(config, ctx.task):
            out.append(cls(config, ctx))
    return out


# the built-in sources register themselves
from mcpworld.sources import code_folders, files, frida, port_gate, probe, query  # noqa: E402,F401

__all__ = ["SOURCES", "EventSource", "Source", "SourceConfig", "SourceError", "TrialContext", "check_task",
           "configs", "for_trial", "register", "task_events", "validate_app_sources"]
