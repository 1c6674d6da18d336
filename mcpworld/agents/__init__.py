"""Agents: oracle, null, claude, openai, command. Each registers itself by name."""

from mcpworld.agents import simple  # noqa: F401  (registers null, oracle)
from mcpworld.agents.base import AGENTS, Agent, AgentContext, AgentError, Usage

__all__ = ["AGENTS", "Agent", "AgentContext", "AgentError", "Usage", "make_agent"]


def make_agent(name: str, **options) -> Agent:
    from mcpworld.agents import claude, command, openai_agent  # noqa: F401  (register on first use: heavier imports)

    if name not in AGENTS:
        raise ValueError(f"unknown agent '{name}' (known: {', '.join(sorted(AGENTS))})")
    return AGENTS[name](**options)
