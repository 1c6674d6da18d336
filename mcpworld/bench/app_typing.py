"""Typed text arriving whole in each real app (issue 34 §1): texts typed through the computer tool into a real
text field of the app, each confirmed and read back from the app's own event, and compared with what was sent
(characters lost, added or replaced), beside CPU burners.

An app's field is `apps/<app>/typing.json` (no proof depends on it: it is not in the tasks' hash): `task` (whose
snapshot has what is typed into), `start` (computer actions, once), `enter` (per text; "{text}" in an action's
text is the text, "{home}" the agent's HOME; {"focus": REGEX} waits for that window), `event` and `value` (the
payload key that must read `expect`, by default the text itself), optionally `where` (payload keys the event
must also have), `after` (actions once the text was read back), `max_len`, `punct` (the punctuation the field
takes), `remapped` (characters the keymap lacks, bound to spare keycodes as they are typed), `slash` (whether
the field takes "/"). The texts mix words, capitals, digits, punctuation and such characters."""

from __future__ import annotations

import asyncio
import difflib
import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mcpworld.bench.stats import Figure, stat

RECIPE = "typing.json"
WORDS = ["layer", "Survey", "north", "EAST", "river", "Bridge", "data", "v2", "MAY", "x86_64", "road", "Main"]
PUNCT = "-_.,;:!?@#%&+=()[]'"
REMAPPED = "éüßøçñ€§"


class TypingField(BaseModel):
    model_config = ConfigDict(extra="forbid")

    about: str
    task: str
    start: list[dict[str, Any]] = Field(default_factory=list)
    enter: list[dict[str, Any]]
    event: str
    value: str
    expect: str = "{text}"
    where: dict[str, Any] = Field(default_factory=dict)
    after: list[dict[str, Any]] = Field(default_factory=list)
    max_len: int = Field(default=48, ge=16)
    punct: str = PUNCT
    remapped: str = REMAPPED
    slash: bool = True

    @classmethod
    def of(cls, app_folder: Path) -> "TypingField | None":
        """The app's field, or None where the app has none; a malformed file raises ConfigError naming it."""
        from mcpworld.errors import ConfigError

        path = app_folder / RECIPE
        if not path.exists():
            return None
        try:
            return cls.model_validate(json.loads(path.read_text()))
        except json.JSONDecodeError as e:
            raise ConfigError(path, f"line {e.lineno}", e.msg) from None
        except ValueError as e:
            errors = getattr(e, "errors", lambda: [])()
            where = ".".join(map(str, errors[0]["loc"])) if errors else "?"
            raise ConfigError(path, where, errors[0]["msg"] if errors else str(e)) from None


def texts(n_chars: int, f: TypingField, seed: int = 34) -> list[str]:
    """Texts of 8 to max_len characters, n_chars in all; each distinct (it starts with its index: a repeat
    would hide a text that never arrived), none with a leading or trailing space."""
    rnd, out, total = random.Random(seed), [], 0
    while total < n_chars:
        parts: list[str] = []
        while sum(map(len, parts)) < rnd.randint(8, f.max_len - 8):
            r = rnd.random()
            if r < 0.45:
                parts.append(rnd.choice(WORDS))
            elif r < 0.65:
                parts.append(str(rnd.randint(0, 9999)))
            elif r < 0.85 and f.punct:
                parts.append(rnd.choice(f.punct))
            elif r < 0.93:
                parts.append(("/" if f.slash else "-").join(rnd.choice(WORDS).lower() for _ in range(2)))
            elif f.remapped:
                parts.append(rnd.choice(f.remapped))
            parts.append(" " if rnd.random() < 0.3 else "")
        text = f"{len(out)}{''.join(parts).strip()}"[: f.max_len].strip()
        out.append(text)
        total += len(text)
    return out


@dataclass
class Arrival:
    sent: str
    got: str | None  # None: no event within the wait
    seconds: float   # typing it

    @property
    def wrong(self) -> bool:
        return self.got != self.sent

    def damage(self) -> dict[str, int]:
        """Characters lost, added (doubled or stray) and replaced between what was sent and what arrived."""
        if self.got is None:
            return {"lost": len(self.sent), "added": 0, "replaced": 0}
        d = {"lost": 0, "added": 0, "replaced": 0}
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, self.sent, self.got, autojunk=False).get_opcodes():
            if op == "delete":
                d["lost"] += i2 - i1
            elif op == "insert":
                d["added"] += j2 - j1
            elif op == "replace":
                d["replaced"] += max(i2 - i1, j2 - j1)
        return d


def _typist(f: TypingField, sent: list[str], wait: float):
    from mcpworld.agents.base import Agent

    class Typist(Agent):
        name = "typist"

        def __init__(self):
            self.arrivals: list[Arrival] = []

        async def run(self, ctx):
            home = (await ctx.tools.call("bash", {"command": "echo -n $HOME"})).texts[0].strip()

            def fill(template: str, text: str) -> str:
                return template.replace("{home}", home).replace("{text}", text)

            async def act(action: dict, text: str = "") -> float:
                """Sends one action (or waits for a window); the seconds a `type` took, else 0."""
                if "focus" in action:  # until that window has the focus and is drawn
                    await ctx.env.wait_window(action["focus"], 30.0)
                    return 0.0
                a = dict(action, text=fill(action["text"], text)) if "text" in action else action
                t0 = time.monotonic()
                r = await ctx.tools.call("computer", a)
                if r.is_error:
                    raise RuntimeError(f"{a}: {r.summary()}")
                return time.monotonic() - t0 if a.get("action") == "type" else 0.0

            for action in f.start:
                await act(action)
                await asyncio.sleep(0.5)
            for text in sent:
                since = len(ctx.events.log.events)
                seconds = 0.0
                for action in f.enter:
                    seconds += await act(action, text)
                try:
                    got = (await self.last_event(ctx, since)).payload.get(f.value)
                except asyncio.TimeoutError:
                    got = None
                    await ctx.tools.call("computer", {"action": "key", "text": "Escape"})  # whatever is still open
                self.arrivals.append(Arrival(fill(f.expect, text), got, seconds))
                for action in f.after:
                    await act(action)

        async def last_event(self, ctx, since: int):
            """The field's event once no other came for a second (an editor reports its cursor as it goes)."""
            def matches(e):
                return all(e.payload.get(k) == v for k, v in f.where.items())
            e = await asyncio.wait_for(ctx.events.wait_event(f.event, where=matches, since=since), wait)
            while True:
                try:
                    e = await asyncio.wait_for(ctx.events.wait_event(
                        f.event, where=matches, since=ctx.events.log.events.index(e) + 1), 1.0)
                except asyncio.TimeoutError:
                    return e

    return Typist()


@dataclass
class Typed:
    app: str
    arrivals: list[Arrival]
    failure: str | None  # the trial ended before every text was typed

    @property
    def chars(self) -> int:
        return sum(len(a.sent) for a in self.arrivals)

    @property
    def wrong(self) -> list[Arrival]:
        return [a for a in self.arrivals if a.wrong]

    def damage(self) -> dict[str, int]:
        out = {"lost": 0, "added": 0, "replaced": 0}
        for a in self.arrivals:
            for k, v in a.damage().items():
                out[k] += v
        return out

    def rates(self) -> list[float]:
        """Characters per second of typing, per text."""
        return [len(a.sent) / a.seconds for a in self.arrivals if a.seconds > 0]


async def type_into(rt, n_chars: int, out: Path, burners: int = 2, wait: float = 15.0) -> Typed:
    """Types about n_chars characters into the field of `rt`'s app (rt: any task of the app; the field names
    its own), with `burners` CPU burners beside."""
    from mcpworld.config.load import load_tasks
    from mcpworld.trial import Trial, TrialOptions

    f = TypingField.of(rt.app.folder)
    if f is None:
        raise ValueError(f"{rt.app.id} has no {RECIPE}")
    task = load_tasks()[f.task] if f.task != rt.key else rt
    sent = texts(n_chars, f)
    agent = _typist(f, sent, wait)
    timeout = 120 + (3 + f.max_len * 0.1) * len(sent)
    procs = [await asyncio.create_subprocess_exec(sys.executable, "-c", "while True: pass") for _ in range(burners)]
    try:
        result = await Trial(task, agent, TrialOptions(mode="gui", timeout=timeout), out).run()
    finally:
        for p in procs:
            p.kill()
            await p.wait()
    failure = result.failure_detail if result.agent_failure or len(agent.arrivals) < len(sent) else None
    return Typed(rt.app.id, agent.arrivals, failure)


def describe(t: Typed, burners: int) -> str:
    d = t.damage()
    return (f"{t.app}: {len(t.arrivals)} texts, {t.chars} characters, {len(t.wrong)} wrong (lost {d['lost']}, added "
            f"{d['added']}, replaced {d['replaced']}), {burners} CPU burners"
            + (f"; the trial ended early: {t.failure}" if t.failure else ""))


async def measure(chosen: dict, n_chars: int, out: Path) -> list[Figure]:
    """Per app with a field: the characters per second typed into it beside two CPU burners, against the same
    texts with none (its baseline); the note counts the texts that arrived wrong either way."""
    figures = []
    for app_id, rt in sorted(chosen.items()):
        if TypingField.of(rt.app.folder) is None:
            continue
        quiet = await type_into(rt, n_chars, out / f"typing-{app_id}-quiet", burners=0)
        loaded = await type_into(rt, n_chars, out / f"typing-{app_id}-loaded", burners=2)
        for t in (quiet, loaded):
            if t.failure or not t.rates():
                raise RuntimeError(describe(t, 0 if t is quiet else 2))
        first = loaded.wrong[0] if loaded.wrong else None
        figures.append(Figure(
            part="app_typing", name=f"{rt.app.name}: typed characters per second, two CPU burners beside",
            unit="chars/s", value=stat(loaded.rates()), baseline_name="the same texts, no burner",
            baseline=stat(quiet.rates()), target="0 characters lost, added or replaced",
            note=f"texts read back wrong: {len(loaded.wrong)} of {len(loaded.arrivals)} ({loaded.chars} characters) "
                 f"beside the burners, {len(quiet.wrong)} of {len(quiet.arrivals)} without"
                 + (f"; first wrong: {first.sent!r} arrived as {first.got!r}" if first else "")))
    return figures
