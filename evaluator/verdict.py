"""Match recorded events to a task's key steps and decide the verdict.

Only events the app (probe/frida), the file watcher or the state query produced count;
the agent's own tool calls never do.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from evaluator.events import CODE_RUN, COUNTING_SOURCES, Event
from evaluator import delta


API, GUI = "api", "gui"  # an event's payload `channel`: through the app's API, or not (its GUI)


class StepResult(BaseModel):
    id: str
    reached: bool = False
    event_seq: int | None = None
    event_stream: str | None = None
    event_name: str | None = None
    channel: str | None = None          # the reaching event's channel, where the app tells (api, gui)
    api_only_seq: int | None = None     # gui mode: an API event that would have reached it, not counted
    ts: float | None = None
    error: str | None = None


class Verdict(BaseModel):
    success: bool
    key_steps: list[StepResult]
    kscr: float = Field(description="key steps reached / key steps annotated")
    state_ok: bool | None = None
    check_ok: bool | None = None
    collateral: list[str] = Field(default_factory=list, description="changes to the app's state the task does "
                                  "not ask for (start-to-end state diff), each briefly")
    unmet: list[str] = Field(default_factory=list, description="changes the task expects that the trial did not "
                             "make (or made fewer times than asked)")
    tolerated: list[str] = Field(default_factory=list, description="changes the task did not ask for but tolerates, "
                                 "each with why")
    reason: str = ""
    streams: list[str] = Field(default_factory=list, description="the authenticated streams whose events reached "
                               "the key steps (and 'query' when the final state was checked): what the verdict rests on")
    mode_violation: list[str] = Field(default_factory=list, description="gui mode: key steps the app saw done through "
                                      "its API (not counted, unless the run counts them, flagged)")
    in_app_code: list[dict[str, Any]] = Field(default_factory=list, description="code the agent entered into the "
                                              "app that the app's probe saw (surface, code, blocked): events after "
                                              "the first and the final state count for nothing")


def _step_matches(rstep, event: Event, params: dict) -> bool:
    s = rstep.step
    if event.name not in s.events or event.source not in COUNTING_SOURCES:
        return False
    if s.source and event.source != s.source:
        return False
    if not rstep.where(event.payload):
        return False
    return rstep.check is None or bool(rstep.check(event.payload, params))


class Matcher:
    """Feeds on events as they arrive; remembers the first event that reached each key step."""

    def __init__(self, resolved, mode: str | None = None, count_api_in_gui: bool = False):
        """mode gui: a key step reached only through the app's API (an event whose channel is `api`) does
        not count, unless count_api_in_gui; either way the verdict lists it under mode_violation."""
        self.resolved = resolved
        self.gui = mode == GUI
        self.count_api = count_api_in_gui
        self.params = dict(resolved.task.params)
        self.results = {rs.step.id: StepResult(id=rs.step.id) for rs in resolved.steps}
        self.frozen = False  # once the verdict is decided, later events (teardown's) change nothing
        self.allowed_code = resolved.task.code_allowances
        self.in_app_code: list[dict[str, Any]] = []

    def feed(self, event: Event) -> None:
        if self.frozen:
            return
        if event.name == CODE_RUN and event.source in COUNTING_SOURCES:
            p = event.payload
            if not any(a.allows(p.get("surface"), p.get("code")) for a in self.allowed_code):
                self.in_app_code.append({"surface": p.get("surface"), "code": p.get("code"),
                                         "blocked": p.get("blocked"), "seq": event.seq, "stream": event.stream})
            return
        if self.in_app_code:
            return  # code the app did not ship ran (or was refused) there: what the app reports after it is not evidence
        reached_before = {sid for sid, r in self.results.items() if r.reached}
        for rs in self.resolved.steps:
            res = self.results[rs.step.id]
            if res.reached:
                continue
            if rs.step.after is not None and rs.step.after not in reached_before:
                continue  # events are fed in order: this one is not later than the step it must follow
            try:
                hit = _step_matches(rs, event, self.params)
            except Exception as e:  # a faulty task check must not kill the evaluator; it is recorded
                res.error = f"check raised {type(e).__name__}: {e}"
                continue
            if not hit:
                continue
            channel = event.payload.get("channel") if isinstance(event.payload.get("channel"), str) else None
            if self.gui and channel == API and not self.count_api:
                if res.api_only_seq is None:
                    res.api_only_seq = event.seq
                continue
            res.reached, res.event_seq, res.event_stream = True, event.seq, event.stream
            res.event_name, res.ts, res.channel = event.name, event.ts, channel

    def verdict(self, events: list[Event], state: dict[str, Any] | None,
                start_state: dict[str, Any] | None = None) -> Verdict:
        r = self.resolved
        self.frozen = True
        steps = [self.results[rs.step.id].model_copy() for rs in r.steps]
        reached = {s.id for s in steps if s.reached}
        kscr = len(reached) / len(steps) if steps else 0.0
        missing = [sid for sid in r.required_steps if sid not in reached]
        reasons = []
        if missing:
            reasons.append(f"key steps not reached: {', '.join(missing)}")
        state_ok = None
        if r.success_state is not None:
            state_ok = state is not None and bool(r.success_state(state))
            if not state_ok:
                reasons.append("final state does not satisfy success.state" if state is not None else "no final state")
        check_ok = None
        if r.success_check is not None:
            try:
                check_ok = bool(r.success_check([e for e in events if e.source in COUNTING_SOURCES], state, self.params))
            except Exception as e:
                check_ok = False
                reasons.append(f"success check raised {type(e).__name__}: {e}")
            if not check_ok and not reasons:
                reasons.append("success check failed")
        unmet, damage, tolerated = self._delta(start_state, state)
        if unmet:
            reasons.append(f"expected changes not made: {'; '.join(unmet)}")
        if damage:
            shown = ", ".join(damage[:5]) + (f" and {len(damage) - 5} more" if len(damage) > 5 else "")
            reasons.append(f"collateral changes the task does not ask for: {shown}")
        violations = [s.id for s in steps if self.gui and (s.channel == API or (not s.reached and s.api_only_seq is not None))]
        if violations:
            reasons.append(f"reached through the app's API in gui mode: {', '.join(violations)}"
                           + (" (counted, as the run asks)" if self.count_api else " (not counted)"))
        if self.in_app_code:
            first = self.in_app_code[0]
            reasons.insert(0, f"agent code entered into the app ({first['surface']}"
                              f"{', refused' if first.get('blocked') else ''}): events after it and the final state "
                              "count for nothing")
        success = (not missing and state_ok is not False and check_ok is not False and not damage and not unmet
                   and not self.in_app_code)
        streams = sorted({s.event_stream for s in steps if s.reached and s.event_stream}
                         | ({"query"} if state_ok is not None or check_ok is not None else set()))
        return Verdict(success=success, key_steps=steps, kscr=kscr, state_ok=state_ok, check_ok=check_ok,
                       collateral=damage, unmet=unmet, tolerated=tolerated, streams=streams, mode_violation=violations,
                       in_app_code=list(self.in_app_code), reason="; ".join(reasons) or "all key steps reached and the final state holds")

    def _delta(self, start: dict[str, Any] | None, end: dict[str, Any] | None) -> tuple[list[str], list[str], list[str]]:
        """(expected changes not made, collateral changes, tolerated changes) between the start and end states."""
        spec = self.resolved.state_diff
        if spec is None:
            return [], [], []
        if start is None or end is None:
            return [f"no {'final' if end is None else 'starting'} state to compare"], [], []
        if start.get("read_from") != end.get("read_from"):
            # read two ways (the app gone at the end: its files): only what both readings hold compares
            both = start.keys() & end.keys()
            start, end = {k: start[k] for k in both}, {k: end[k] for k in both}
        shape = spec.shape
        out = delta.match(delta.changes(start, end, shape), spec.expected, spec.tolerances, start, shape)
        return out.unmet, [c.brief() for c in out.collateral], [f"{path} ({why})" for path, why in out.tolerated]

    def _collateral(self, start: dict[str, Any] | None, end: dict[str, Any] | None) -> list[str]:
        return self._delta(start, end)[1]
