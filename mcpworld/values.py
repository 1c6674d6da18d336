"""The run's values: where the environment put things, the app's named paths, the ports and secrets drawn
for this trial. One typed object that the reset, the launch, the event sources, the MCP servers, the state
query and the agents share; `placeholders()` is what `{name}` in app and task files expands from."""

from __future__ import annotations

import dataclasses
import os
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcpworld import paths
from mcpworld.config.templating import expand, expand_tree

# the placeholders every run has, whatever its app
ENV_PLACEHOLDERS = ("home", "env_dir", "root", "runtime", "python", "bindir", "app_host", "bind_host", "npm_prefix")


def runtime_names(app) -> list[str]:
    """Every placeholder a run of this app fills in: the environment's, the app's paths, ports and secrets."""
    return [*ENV_PLACEHOLDERS, *app.paths, *(f"port_{p}" for p in app.ports), *(f"secret_{s}" for s in app.secrets)]


@dataclass(frozen=True)
class RunValues:
    home: str               # HOME inside the environment
    env_dir: str            # mcpworld's private folder inside the environment
    root: str               # the content root (apps/, hooks/, tasks/, snapshots/ ...) on the host
    runtime: str            # the probe runtime package's folder on the host
    python: str             # the Python that runs mcpworld's parts in this place
    app_host: str           # where the host reaches the app's ports
    bind_host: str = "127.0.0.1"  # the address the app's own servers listen on (loopback, or the container's)
    npm_prefix: str = ""    # the app's npm packages and Node (mcpworld.install.npm_prefix), the same path everywhere
    paths: dict[str, str] = field(default_factory=dict)    # the app's named paths ({base}, {config} ...)
    ports: dict[str, int] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)

    @classmethod
    def draw(cls, app, env, free_port: Callable[[], int]) -> RunValues:
        """A new trial's values: the environment's places, fresh ports and secrets, the app's paths expanded."""
        from mcpworld.install import npm_prefix
        base = cls(home=env.home, env_dir=env.env_dir, root=str(paths.ROOT), runtime=str(paths.RUNTIME_DIR),
                   python=env.python, app_host=env.app_host, bind_host=env.bind_host,
                   npm_prefix=str(npm_prefix(app)), ports={name: free_port() for name in app.ports},
                   secrets={name: secrets.token_urlsafe(18) for name in app.secrets})
        resolved: dict[str, str] = {}
        for name, template in app.paths.items():  # a path may use the ones before it
            resolved[name] = expand(template, {**base.placeholders(), **resolved})
        return dataclasses.replace(base, paths=resolved)

    @property
    def bindir(self) -> str:
        return os.path.dirname(self.python)

    def path(self, name: str) -> str:
        return self.paths[name]

    def port(self, name: str) -> int:
        return self.ports[name]

    def secret(self, name: str) -> str:
        return self.secrets[name]

    def placeholders(self) -> dict[str, str]:
        return {"home": self.home, "env_dir": self.env_dir, "root": self.root, "runtime": self.runtime,
                "python": self.python, "bindir": self.bindir, "app_host": self.app_host, "bind_host": self.bind_host,
                "npm_prefix": self.npm_prefix, **self.paths,
                **{f"port_{k}": str(v) for k, v in self.ports.items()},
                **{f"secret_{k}": v for k, v in self.secrets.items()}}

    def expand(self, template: str) -> str:
        return expand(template, self.placeholders())

    def expand_tree(self, obj: Any) -> Any:
        return expand_tree(obj, self.placeholders())

    def host_python(self) -> RunValues:
        """The same values for a part that runs on the host but acts on the app inside the environment (an
        MCP server): the host's Python; paths stay the environment's, since the app resolves them."""
        return dataclasses.replace(self, python=sys.executable)

    def on_host(self, host_path: Callable[[str], str]) -> RunValues:
        """The same values as the host sees them, for a part that reads the environment's files from the host
        (the state query): the host's Python, and every path inside the environment mapped to the host."""
        return dataclasses.replace(self, python=sys.executable, home=host_path(self.home),
                                   env_dir=host_path(self.env_dir), paths={k: host_path(v) for k, v in self.paths.items()})
