"""A task: instruction template, parameters, starting snapshot, key steps, success and oracles."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from evaluator.delta import parse_count
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


class Expect(_Model):
    """One change the task asks for in a collection of the app's state: records added, removed, or changed
    to something, each matched one to one with what the trial changed."""

    add: dict[str, Any] | None = Field(default=None, description="a where over each record added")
    remove: dict[str, Any] | None = Field(default=None, description="a where over each record removed (as it was)")
    change: dict[str, Any] | None = Field(default=None, description="a where over each changed record as it was")
    to: dict[str, Any] | None = Field(default=None, description="change: a where over the record as it is after")
    fields: list[str] | None = Field(default=None, description="change: the fields that may differ (default: "
                                     "those `to` names)")
    count: int | str = Field(default=1, description="how many: 2, '0..1' (what the instruction leaves open), '1..' "
                             "or 'all' (every record of the start matching `change`/`remove` and not yet as asked)")
    why: str = Field(default="", description="why this count, where it is not plain from the instruction")

    @model_validator(mode="after")
    def _one_kind(self) -> "Expect":
        kinds = [k for k in ("add", "remove", "change") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError("give exactly one of add, remove or change")
        if self.change is not None and self.to is None:
            raise ValueError("a change says what it changes `to`")
        if self.change is None and (self.to is not None or self.fields is not None):
            raise ValueError("`to` and `fields` belong to a change")
        parse_count(self.count)
        if self.count == "all" and self.add is not None:
            raise ValueError("'all' counts records of the start: a change or a remove, not an add")
        return self

    @property
    def kind(self) -> str:
        return "add" if self.add is not None else "remove" if self.remove is not None else "change"

    @property
    def where(self) -> dict[str, Any]:
        return self.add if self.add is not None else self.remove if self.remove is not None else self.change


class Tolerate(_Model):
    """A change the task does not ask for but accepts, and why (the app's own bookkeeping: a modification
    time, a recent-files list, the view)."""

    collection: str
    kinds: list[Literal["add", "remove", "change"]] | None = Field(default=None, description="default: all three")
    where: dict[str, Any] = Field(default_factory=dict, description="over the record before or after")
    fields: list[str] | None = Field(default=None, description="a change: only these fields (default: any)")
    why: str = Field(min_length=3)


class Success(_Model):
    key_steps: Literal["all"] | list[str] = "all"
    state: dict[str, Any] = Field(default_factory=dict, description="predicate over the final state query payload")
    check: str | None = Field(default=None, description="'file.py:function', (events, state, params) -> bool")
    expect: dict[str, Expect | list[Expect]] = Field(default_factory=dict, description=(
        "the change the task asks for, per collection of the queried state (its path, with [*] for nested "
        "ones): the records added, removed and changed. The trial's changes between the state at the start and "
        "at the end are matched to these one to one; one left over is collateral and fails the trial. A task "
        "that gives none asks for no change: any change is collateral"))
    tolerate: list[Tolerate] = Field(default_factory=list)
    @model_validator(mode="before")
    @classmethod
    def _no_allow_list(cls, data: Any) -> Any:
        if isinstance(data, dict) and "changes" in data:
            raise ValueError("`changes` (the older allow-list) is no longer read: state the asked change under "
                             "`expect` (README, Tasks); a task that asks for no change gives no `expect`")
        return data

    def expectations(self) -> list[tuple[str, Expect]]:
        return [(c, e) for c, es in self.expect.items() for e in (es if isinstance(es, list) else [es])]


class FileMilestone(_Model):
    event: str = Field(pattern=r"^[a-z0-9_]+$")
    path: str
    kinds: list[Literal["create", "modify", "close_write", "delete", "move_to", "move_from", "attrib"]] = ["close_write"]


class Shows(_Model):
    """An app event that shows a step's effect (as its key steps name events)."""

    event: str
    where: dict[str, Any] = Field(default_factory=dict)


DRAW_SHARE = 0.02  # what a palette, a picker or a dialog changes at the least


class OracleStep(_Model):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    window: str | None = Field(default=None, description=(
        "GUI oracles: regular expression for the name of the window that has the focus once this step is done; "
        "the oracle waits for it (a dialog opening on a loaded machine), and fails clearly if it never comes"))
    draws: bool | Annotated[float, Field(gt=0, le=1)] = Field(default=False, description=(
        "GUI oracles: this step opens something in the window (a palette, a picker, an input box) that the next "
        "one types into; the oracle waits until the screen has drawn it (at least 2% of the screen changed since "
        "the step began, then 0.3 s still; at most 30 s), as a person looks before typing. A number instead of "
        "true is the share of the screen that must change, for what is smaller (an inline rename box)"))
    shows: Shows | None = Field(default=None, description=(
        "scripted solutions: the app event that shows this step's effect (a window's workbench up, the debugger "
        "paused); the solution waits for it, at most a minute, before its next step or its end, as a person "
        "watches the screen until the change appears. It only waits: an event that never comes is the verdict's "
        "to judge"))
    unless: Shows | None = Field(default=None, description=(
        "scripted solutions: skip this step when the app has already reported this event since the solution "
        "began: a second try a person makes only if the first did not take (the folder dialog's Return that "
        "went into the folder instead of opening it). The step before it should `shows` the same event"))

    @property
    def draw_share(self) -> float:
        """The share of the screen this step's drawing must change (0: it draws nothing the oracle waits on)."""
        return 0.0 if self.draws is False else DRAW_SHARE if self.draws is True else float(self.draws)

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


class CodeAllowance(_Model):
    """A code-entry surface a task asks the agent to use, and what may be entered there."""

    surface: str = Field(description="the app's `code_run` surface (e.g. extension)")
    code: str | None = Field(default=None, description="a regular expression a record's code must match whole "
                             "(e.g. the one extension's folder being made, moved in, and the index written); "
                             "without it, anything entered there")

    @field_validator("code")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as e:
                raise ValueError(f"not a regular expression: {e}") from None
        return v

    def allows(self, surface: str | None, code: str | None) -> bool:
        return surface == self.surface and (self.code is None or re.fullmatch(self.code, code or "") is not None)


class Equivalent(_Model):
    """A mutant of the MCP oracle (mcpworld.mutants) that does the asked thing another way, and why: it may pass."""

    mutant: str = Field(pattern=r"^[a-z]+@.+$", description="the mutant's id, as `mcpworld tasks mutate` names it")
    why: str = Field(min_length=3)


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
    equivalent: list[Equivalent] = Field(default_factory=list, description="mutants of the MCP oracle that do the "
                                         "asked thing another way (reviewed, each with why): they may pass")
    allows_code: list[str | CodeAllowance] = Field(default_factory=list, description="code-entry surfaces the task "
                                                  "asks the agent to use (an app's `code_run` surface, e.g. an "
                                                  "extension install; or {surface, code}: only what matches there): "
                                                  "code entered there is the work; anywhere else it ends the trial as "
                                                  "in_app_code")

    @property
    def code_allowances(self) -> list[CodeAllowance]:
        return [a if isinstance(a, CodeAllowance) else CodeAllowance(surface=a) for a in self.allows_code]
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
            return sum(1 for s in self.oracle.gui if s.is_action and s.unless is None)  # a second try is not a step
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
