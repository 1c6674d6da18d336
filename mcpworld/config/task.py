"""A task: instruction template, parameters, starting snapshot, key steps, success and oracles."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evaluator.events import COUNTING_SOURCES, Source
from gateway.modes import COMPUTER_TOOL, MODES, Mode
from mcpworld.config.app import CopySpec

Difficulty = Literal["Easy", "Medium", "Hard"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class KeyStep(_Model):
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    description: str = ""
    event: str | list[str] = Field(description="the event name, or several that each count (e.g. a GUI and an "
                                   "API path that reach different functions)")
    after: str | None = Field(default=None, description="id of a key step that must be reached first: only "
                              "events after the one that reached it count")
    source: Source | None = Field(default=None, description="count only events from this source")
    where: dict[str, Any] = Field(default_factory=dict)
    check: str | None = Field(default=None, description="'file.py:function' in the task folder, (event, params) -> bool")


    @field_validator("source")
    @classmethod
    def _app_source(cls, source: Source | None) -> Source | None:
        if source is not None and source not in COUNTING_SOURCES:
            raise ValueError(f"'{source}' events never reach a key step (use one of {', '.join(sorted(COUNTING_SOURCES))})")
        return source

    @property
    def events(self) -> list[str]:
        return [self.event] if isinstance(self.event, str) else self.event


class Success(_Model):
    key_steps: Literal["all"] | list[str] = "all"
    state: dict[str, Any] = Field(default_factory=dict, description="predicate over the final state query payload")
    check: str | None = Field(default=None, description="'file.py:function', (events, state, params) -> bool")
    changes: dict[str, bool | dict[str, Any]] = Field(default_factory=dict, description=(
        "what the task may change in the queried state, per top-level field: true (anything), or a where an "
        "item must match before or after its change. Every other change between the state at the start and "
        "at the end is collateral damage and fails the trial"))


class FileMilestone(_Model):
    event: str = Field(pattern=r"^[a-z0-9_]+$")
    path: str
    kinds: list[Literal["create", "modify", "close_write", "delete", "move_to", "move_from", "attrib"]] = ["close_write"]


class OracleStep(_Model):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    window: str | None = Field(default=None, description=(
        "GUI oracles: regular expression for the name of the window that has the focus once this step is done; "
        "the oracle waits for it (a dialog opening on a loaded machine), and fails clearly if it never comes"))


    @property
    def is_action(self) -> bool:
        """A step a person would count: not a computer-tool wait or screenshot (MCP and bash calls count)."""
        return self.tool != COMPUTER_TOOL or self.args.get("action") not in ("screenshot", "wait", None)


class Oracle(_Model):
    mcp: list[OracleStep] | None = None
    gui: list[OracleStep] | None = None


class Solution(_Model):
    """Another scripted solution: a near miss that must fail, or a right alternative that must pass."""

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    why: str = Field(description="what is wrong with it (a near miss), or which other path it takes (an alternative)")
    mode: Mode = Field(default=Mode.MCP, description="the mode whose tools it uses")
    steps: list[OracleStep] = Field(min_length=1)


class Task(_Model):
    template: int = Field(description="template id in the MCPWorld paper's Appendix E")
    app: str
    instruction: str
    params: dict[str, str | int | float] = Field(default_factory=dict)
    difficulty: Difficulty
    human_steps: int | None = Field(default=None, ge=0, description="defaults to the GUI oracle's action count")
    grouped_human_steps: int | None = Field(default=None, ge=0)
    modes: list[Mode] = Field(default_factory=lambda: list(MODES))
    status: Literal["ready", "unavailable", "stub"] = "ready"
    status_reason: str = Field(default="", description="why a task is not ready (shown in reports)")
    paper_key_steps: int | None = Field(default=None, ge=0, description="the template's key-step count in the paper's "
                                        "Appendix E, which key_steps mirror unless `notes` says why not")
    notes: str = Field(default="", description="where and why the task departs from its template")
    context_data: list[CopySpec] = Field(default_factory=list)
    file_milestones: list[FileMilestone] = Field(default_factory=list)
    frida_scripts: list[str] = Field(default_factory=list, description="the task's own hook scripts, in its folder "
                                     "(or, starting with hooks/, under the content root)")
    app_build: Literal["any", "source"] = Field(default="any", description="'source': its hooks need the app's "
                                                "source build (internal functions); a trial without --app-build "
                                                "takes the newest one in builds/")
    key_steps: list[KeyStep] = Field(min_length=1)
    success: Success = Success()
    state_query: bool = True
    timeout: float = Field(default=300.0, gt=0)
    max_steps: int = Field(default=50, gt=0)
    oracle: Oracle = Oracle()
    near_misses: list[Solution] = Field(default_factory=list, description="wrong-but-close solutions (over-broad, "
                                        "duplicated, the wrong method, partial, a file forged from bash): each must fail")
    alternatives: list[Solution] = Field(default_factory=list, description="other right solutions: each must pass")
    setup: list[OracleStep] = Field(default_factory=list, description="MCP/bash calls that put the app in the task's "
                                    "starting state once it is up (e.g. a recording running); their events never count")
    setup_events: list[str] = Field(default_factory=list, description="milestones that mark the set-up as done "
                                    "(its effects may be asynchronous): the agent starts once all were recorded")

    # filled in by the loader
    id: str = Field(default="", exclude=True)

    @field_validator("key_steps")
    @classmethod
    def _unique_ids(cls, steps: list[KeyStep]) -> list[KeyStep]:
        seen = set()
        for s in steps:
            if s.id in seen:
                raise ValueError(f"duplicate key step id '{s.id}'")
            if s.after is not None and s.after not in seen:
                raise ValueError(f"key step '{s.id}': after '{s.after}' must name an earlier key step")
            seen.add(s.id)
        return steps

    @property
    def human_step_count(self) -> int | None:
        if self.human_steps is not None:
            return self.human_steps
        if self.oracle.gui:
            return sum(1 for s in self.oracle.gui if s.is_action)
        return None

    def oracle_for(self, mode: Mode) -> list[OracleStep] | None:
        """hybrid replays the MCP solution where there is one, else the GUI one."""
        if mode == Mode.GUI:
            return self.oracle.gui
        if mode == Mode.MCP:
            return self.oracle.mcp
        return self.oracle.mcp or self.oracle.gui

    def solution(self, solution_id: str) -> Solution:
        for s in [*self.near_misses, *self.alternatives]:
            if s.id == solution_id:
                return s
        raise KeyError(solution_id)

    def instruction_text(self) -> str:
        from mcpworld.config.templating import expand
        return expand(self.instruction, self.params)
