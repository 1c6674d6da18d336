"""Environment backends: where a trial's desktop, app and agent tools run. Each registers itself by name;
`make_environment` is the one way the rest of mcpworld gets one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mcpworld.envs.base import Environment, ExecResult
from mcpworld.errors import MCPWorldError

if TYPE_CHECKING:
    from mcpworld.config.app import AppConfig

LOCAL, DOCKER = "local", "docker"


@dataclass(frozen=True)
class EnvOptions:
    """What a backend may be asked for; each takes what applies to it."""

    desktop: str = "xfce"            # docker: the desktop image
    gpu: str = "auto"                # docker: auto, none or nvidia
    app_build: Path | None = None    # a build folder (mcpworld apps build) in front of the packaged app
    width: int = 1280
    height: int = 800


Factory = Callable[["AppConfig | None", EnvOptions], Environment]
BACKENDS: dict[str, Factory] = {}


def register_backend(name: str):
    """Class decorator: the class's `for_app(app, options)` makes its environments."""
    def wrap(cls):
        if name in BACKENDS:
            raise TypeError(f"two environment backends named '{name}'")
        BACKENDS[name] = cls.for_app
        cls.backend = name
        return cls
    return wrap


def make_environment(backend: str, app: AppConfig | None = None, options: EnvOptions = EnvOptions()) -> Environment:
    if backend not in BACKENDS:
        raise MCPWorldError(f"unknown backend '{backend}' (known: {', '.join(BACKENDS)})")
    return BACKENDS[backend](app, options)


# the built-in backends register themselves (the docker SDK is imported only when a container is made)
from mcpworld.envs import docker, local  # noqa: E402,F401

__all__ = ["BACKENDS", "DOCKER", "LOCAL", "EnvOptions", "Environment", "ExecResult", "make_environment",
           "register_backend"]
