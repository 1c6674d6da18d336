"""What an agent sees (a task instruction and one tool list) and what it reports back."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field

from pydantic import BaseModel


# the newest screenshots a model agent keeps in its history by default (older ones become a note): one
# figure for every model agent, so that agents compared on a task saw as much
KEEP_SCREENSHOTS = 3


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    model: str | None = None
    # requests the model's API client sent again after a rate limit or a server error
    api_retries: int = 0
    # tool calls the model made with malformed arguments or an unknown tool name (answered with the error)
    bad_tool_calls: int = 0

    def add(self, other) -> None:
        for f in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
            setattr(self, f, getattr(self, f) + (getattr(other, f, 0) or 0))


@dataclass
class AgentContext:
    instruction: str
    mode: str
    no_bash: bool
    tools: object          # gateway.registry.ToolRegistry (call, specs)
    task: object           # mcpworld.config.load.ResolvedTask
    max_steps: int
    gateway_url: str | None = None
    values: object = None  # mcpworld.values.RunValues: the run's values (home, ports, app paths)
    env: object = None     # mcpworld.envs.base.Environment; only the oracle looks at it (focus waits)
    events: object = None  # evaluator.server.Evaluator; only the oracle looks at it (what a step shows)
    usage: Usage = field(default_factory=Usage)
    steps: int = 0
    messages: list = field(default_factory=list)  # the agent's transcript, if it keeps one
    final_text: str = ""


class AgentError(Exception):
    """The agent itself failed (bad reply, API error, crashed subprocess)."""


class StepCapReached(AgentError):
    pass


class Agent(abc.ABC):
    name: str

    @abc.abstractmethod
    async def run(self, ctx: AgentContext) -> None:
        """Act on the environment through ctx.tools until done; record steps and usage on ctx."""

    def check(self) -> None:
        """Raise AgentError naming what the agent lacks (an API key, a server that answers), before any
        environment starts: one clear error up front instead of a failure in every trial."""


AGENTS: dict[str, type[Agent]] = {}


def register(cls: type[Agent]) -> type[Agent]:
    if not getattr(cls, "name", None):
        raise TypeError(f"agent class {cls.__name__} has no name")
    if cls.name in AGENTS:
        raise TypeError(f"two agents named '{cls.name}': {AGENTS[cls.name].__name__} and {cls.__name__}")
    AGENTS[cls.name] = cls
    return cls
