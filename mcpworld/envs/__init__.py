"""Environment backends: where a trial's desktop, app and agent tools run."""

from mcpworld.envs.base import Environment, ExecResult

__all__ = ["Environment", "ExecResult"]
