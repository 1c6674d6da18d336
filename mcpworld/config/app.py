"""An app: how to install and launch it, where its data lives, its probes, MCP servers and events."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mcpworld import paths
from mcpworld.config.errors import from_validation
from mcpworld.errors import ConfigError


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Install(_Model):
    apt: list[str] = []
    pip: list[str] = []
    check: list[str] = Field(default_factory=list, description="argv that exits 0 when the app is installed")


class Launch(_Model):
    command: list[str] = Field(min_length=1)
    env: dict[str, str] = {}


class Ready(_Model):
    window_name: str = Field(description="regular expression a mapped top-level window's name must match")
    probe: bool = Field(default=True, description="also wait for the app's probe to connect")
    event: str | None = Field(default=None, description="also wait for this probe event (the UI is up)")
    port: str | None = Field(default=None, description="also wait until this allocated port accepts connections "
                             "(the app's API is up, so it has finished loading; Frida attaches after that)")
    settle: float = Field(default=0.3, ge=0, description="then wait until the screen is unchanged this long")
    timeout: float = 60.0


class CopySpec(_Model):
    """A folder or file copied with rsync -a --delete into the environment."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    from_: str = Field(alias="from")
    to: str


class McpServer(_Model):
    command: list[str] = Field(min_length=1)
    env: dict[str, str] = {}


class RenderedFile(_Model):
    """A file written after the snapshot restore, its text expanded with the run's values (ports, secrets)."""

    path: str
    text: str


class Frida(_Model):
    """Frida hook scripts loaded into the app once its window is up (hooks/frida_bridge.py)."""

    scripts: list[str] = Field(min_length=1, description="paths under the repo root, plain Frida JS; the "
                               "bridge attaches to the launched process, so launch the app binary itself")


class StateQuery(_Model):
    module: str = Field(description="file in the app folder with a `query(ctx) -> dict` function")
    event: str = "state"
    timeout: float = 30.0


class AppConfig(_Model):
    id: str
    name: str
    install: Install = Install()
    launch: Launch
    ready: Ready
    paths: dict[str, str] = Field(default_factory=dict, description="named user-data locations, e.g. base")
    ports: list[str] = Field(default_factory=list, description="loopback ports allocated per environment")
    secrets: list[str] = Field(default_factory=list, description="random values drawn per run: {secret_<name>}")
    rendered_files: list[RenderedFile] = Field(default_factory=list)
    dirs: list[str] = Field(default_factory=list, description="folders created (empty) after the restore")
    frida: Frida | None = None
    probe_files: list[CopySpec] = Field(default_factory=list, description="hook files placed after the snapshot")
    events: dict[str, str] = Field(description="milestone events the app's hooks emit: name -> meaning")
    mcp_servers: dict[str, McpServer] = {}
    state_query: StateQuery | None = None

    folder: Path = Field(default=Path("."), exclude=True)

    @property
    def state_event(self) -> str | None:
        return self.state_query.event if self.state_query else None


def load_app(path: Path) -> AppConfig:
    try:
        raw = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(path, "", f"cannot read TOML: {e}") from None
    try:
        app = AppConfig.model_validate(raw)
    except ValidationError as e:
        raise from_validation(path, e) from None
    if app.id != path.parent.name:
        raise ConfigError(path, "id", f"'{app.id}' differs from its folder name '{path.parent.name}'")
    app.folder = path.parent
    if app.ready.event and app.ready.event not in app.events:
        raise ConfigError(path, "ready.event", f"'{app.ready.event}' is not among the app's events")
    for i, script in enumerate(app.frida.scripts if app.frida else []):
        if not (paths.ROOT / script).is_file():
            raise ConfigError(path, f"frida.scripts[{i}]", f"no file {paths.ROOT / script}")
    if app.ready.port and app.ready.port not in app.ports:
        raise ConfigError(path, "ready.port", f"'{app.ready.port}' is not among the app's ports")
    if app.state_query and not (app.folder / app.state_query.module).is_file():
        raise ConfigError(path, "state_query.module", f"no file {app.folder / app.state_query.module}")
    return app
