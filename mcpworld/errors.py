"""One error root. Config errors name the file, the field and the problem."""

from __future__ import annotations

from pathlib import Path


class MCPWorldError(Exception):
    """Root of every error mcpworld raises on purpose."""


class ConfigError(MCPWorldError):
    """A task or app file is malformed: `file: field: problem`."""

    def __init__(self, file: Path | str, field: str, problem: str):
        self.file, self.field, self.problem = str(file), field, problem
        super().__init__(f"{file}: {field}: {problem}" if field else f"{file}: {problem}")


class ConfigErrors(MCPWorldError):
    """Several ConfigErrors found in one validation pass."""

    def __init__(self, errors: list[ConfigError]):
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))


class EnvironmentSetupError(MCPWorldError):
    """The environment could not be brought up (display, snapshot, app launch, readiness)."""


class AppExitedEarly(EnvironmentSetupError):
    """The app exited (crashed) while starting, before it was ready: before the agent could act."""


class PrerequisiteError(MCPWorldError):
    """Something the machine must have is missing (an app, a binary, a package)."""
