"""Typing stress on each real app (issue 34 §1): texts typed through the computer tool into a real text field
of the app, each confirmed and read back from the app's own event, and compared with what was sent: the
characters lost, doubled or out of order.

    .venv/bin/python tests/soak/app_typing.py APP CHARS OUT [BURNERS]

types at least CHARS characters into APP's field with BURNERS CPU burners beside (default 2) and prints the
count of texts and characters that arrived wrong and the rate (characters per second of typing).
tests/gateway/test_app_typing.py runs a short one per app in the suite. OBS has its own, longer-standing
soak (tests/soak/obs_typing.py: paths typed into a file dialog).

Each field is a recipe of computer-tool actions: `start` once (select what gets renamed), `enter` per text
("{text}" in a type action is the text), then the event whose payload's `value` key must read the text. The
texts mix words, capitals, digits, punctuation, path-like runs and characters the keymap lacks (the gateway
binds them to spare keycodes), within what the field takes."""

from __future__ import annotations

import asyncio
import difflib
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from evaluator.log import EventLog  # noqa: E402
from mcpworld.agents.base import Agent  # noqa: E402
from mcpworld.config.load import load_tasks  # noqa: E402
from mcpworld.results import TrialResult  # noqa: E402
from mcpworld.trial import Trial, TrialOptions  # noqa: E402

WORDS = ["layer", "Survey", "north", "EAST", "river", "Bridge", "data", "v2", "MAY", "x86_64", "road", "Main"]
PUNCT = "-_.,;:!?@#%&+=()[]'"
REMAPPED = "éüßøçñ€§"  # not on the US keymap: each is bound to a spare keycode as it is typed


def key(text: str) -> dict:
    return {"action": "key", "text": text}


@dataclass
class Field:
    task: str  # whose snapshot has the thing renamed
    start: list[dict]
    enter: list[dict]
    event: str
    value: str  # the payload key that holds the text
    max_len: int = 48
    punct: str = PUNCT
    remapped: str = REMAPPED
    where: dict = field(default_factory=dict)  # payload keys the event must also have
    after: list[dict] = field(default_factory=list)  # per text, once it was read back


FIELDS = {
    # Blender: F2 over the 3D view renames the active object (the Cube) in a popup field; names are 63 bytes
    "blender": Field("blender/185", [{"action": "mouse_move", "coordinate": [600, 450]}],
                     [key("F2"), {"action": "wait", "duration": 0.5}, {"action": "type", "text": "{text}"},
                      key("Return")], "object_renamed", "name", max_len=40),
    # QGIS: the Layers panel's first row, F2 edits its name in place
    "qgis": Field("qgis/67", [{"action": "left_click", "coordinate": [75, 414]}],
                  [key("F2"), {"action": "wait", "duration": 0.5}, {"action": "type", "text": "{text}"},
                   key("Return")], "layer_renamed", "name"),
    # Anki: the Browse window's search bar (Ctrl+F selects it); a search is reported as the collection runs it.
    # Anki's search syntax gives quotes, brackets, ":", "-", "*" and "_" meanings: the texts leave them out
    "anki": Field("anki/161", [key("b"), {"action": "wait", "duration": 3.0}],
                  [key("ctrl+f"), {"action": "type", "text": "{text}"}, key("Return")], "searched", "query",
                  punct=".,!?@#%&+=", where={"kind": "cards"}),
    # qBittorrent: a torrent's Tags > Add... prompt; each tag is new, so the session reports it as made (tags
    # are split at commas and trimmed)
    "qbittorrent": Field("qbittorrent/178", [{"action": "left_click", "coordinate": [990, 159]},
                                             {"action": "type", "text": "open-data-census-2023"}],
                         [{"action": "right_click", "coordinate": [480, 216]}, key("g"), key("a"),
                          {"focus": "^Add Tags$"}, {"action": "type", "text": "{text}"}, key("Return")],
                         "tag_created", "tag", punct=PUNCT.replace(",", "")),
    # Joplin's terminal client: its command line (":"), a note made with the typed title (quoted: no quotes in it)
    "joplin": Field("joplin/100", [{"action": "left_click", "coordinate": [640, 10]}],
                    [{"action": "type", "text": ":"}, {"action": "wait", "duration": 0.8},
                     {"action": "type", "text": 'mknote "{text}"'}, key("Return")], "note_created", "title",
                    punct=PUNCT.replace("'", "")),
    # VS Code: lines typed at the end of a plain text file, each read back as the line the cursor is on; Escape
    # closes the word suggestions before Return starts the next line. The editor closes brackets and quotes
    # by itself, even in plain text: the texts leave them out
    "vscode": Field("vscode/1", [key("ctrl+p"), {"action": "wait", "duration": 1.0},
                                 {"action": "type", "text": "ideas.txt"}, {"action": "wait", "duration": 1.0},
                                 key("Return"), {"action": "wait", "duration": 2.0}, key("ctrl+End"), key("Return")],
                    [{"action": "type", "text": "{text}"}], "cursor_moved", "line_text", max_len=60,
                    punct="-_.,;:!?@#%&+=", after=[key("Escape"), key("Return")], where={"path": "notes/ideas.txt"}),
}


def texts(n_chars: int, f: Field, seed: int = 34) -> list[str]:
    """Texts of 8 to max_len characters, n_chars in all; each distinct, none with leading or trailing space."""
    rnd, out, total = random.Random(seed), [], 0
    while total < n_chars:
        parts = []
        while sum(map(len, parts)) < rnd.randint(8, f.max_len - 8):
            r = rnd.random()
            if r < 0.45:
                parts.append(rnd.choice(WORDS))
            elif r < 0.65:
                parts.append(str(rnd.randint(0, 9999)))
            elif r < 0.85 and f.punct:
                parts.append(rnd.choice(f.punct))
            elif r < 0.93:
                parts.append("/".join(rnd.choice(WORDS).lower() for _ in range(2)))
            elif f.remapped:
                parts.append(rnd.choice(f.remapped))
            parts.append(" " if rnd.random() < 0.3 else "")
        text = "".join(parts).strip()[: f.max_len]
        text = f"{len(out)}{text}"[: f.max_len].strip()  # distinct: a repeat would hide a lost rename
        out.append(text)
        total += len(text)
    return out


@dataclass
class Arrival:
    sent: str
    got: str | None  # None: no event within the wait

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


class Typist(Agent):
    name = "typist"

    def __init__(self, f: Field, sent: list[str], wait: float = 15.0):
        self.f, self.sent, self.wait = f, sent, wait
        self.arrivals: list[Arrival] = []
        self.typing_s = 0.0

    async def run(self, ctx):
        f = self.f
        for action in f.start:
            await ctx.tools.call("computer", action)
            await asyncio.sleep(0.5)
        await asyncio.sleep(1.0)
        for text in self.sent:
            since = len(ctx.events.log.events)
            for action in f.enter:
                if "focus" in action:  # until that window has the focus and is drawn
                    await ctx.env.wait_window(action["focus"], 30.0)
                    continue
                a = dict(action, text=action["text"].replace("{text}", text)) if "text" in action else action
                t0 = time.monotonic()
                r = await ctx.tools.call("computer", a)
                if a.get("action") == "type":
                    self.typing_s += time.monotonic() - t0
                if r.is_error:
                    raise RuntimeError(f"{a}: {r.summary()}")
            got = None
            try:
                got = (await self.last_event(ctx, since)).payload.get(f.value)
            except asyncio.TimeoutError:
                await ctx.tools.call("computer", key("Escape"))  # whatever is still open
            self.arrivals.append(Arrival(text, got))
            for action in f.after:
                await ctx.tools.call("computer", action)

    async def last_event(self, ctx, since: int):
        """The field's event once no other came for a second (an editor reports the cursor as it goes)."""
        f = self.f

        def matches(e):
            return all(e.payload.get(k) == v for k, v in f.where.items())
        e = await asyncio.wait_for(ctx.events.wait_event(f.event, where=matches, since=since), self.wait)
        while True:
            try:
                e = await asyncio.wait_for(ctx.events.wait_event(
                    f.event, where=matches, since=ctx.events.log.events.index(e) + 1), 1.0)
            except asyncio.TimeoutError:
                return e


async def type_texts(app: str, n_chars: int, out: Path) -> tuple[Typist, TrialResult]:
    f = FIELDS[app]
    agent = Typist(f, texts(n_chars, f))
    per_text = 3 + f.max_len * 0.05
    trial = Trial(load_tasks()[f.task], agent, TrialOptions(mode="gui", timeout=120 + per_text * len(agent.sent)), out)
    result = await trial.run()
    return agent, result


def summary(agent: Typist) -> dict:
    arrivals = agent.arrivals
    damage = {"lost": 0, "added": 0, "replaced": 0}
    for a in arrivals:
        for k, v in a.damage().items():
            damage[k] += v
    chars = sum(len(a.sent) for a in arrivals)
    return {"texts": len(arrivals), "chars": chars, "wrong": [a.__dict__ for a in arrivals if a.wrong], **damage,
            "chars_per_s": round(chars / agent.typing_s, 1) if agent.typing_s else None}


async def main(app: str, n_chars: int, out: Path, burners: int) -> None:
    procs = [await asyncio.create_subprocess_exec(sys.executable, "-c", "while True: pass") for _ in range(burners)]
    try:
        agent, result = await type_texts(app, n_chars, out)
    finally:
        for p in procs:
            p.kill()
            await p.wait()
    s = summary(agent)
    print(f"{app}: {s['texts']} texts, {s['chars']} characters, {len(s['wrong'])} wrong "
          f"(lost {s['lost']}, added {s['added']}, replaced {s['replaced']}), {s['chars_per_s']} characters/s typing, "
          f"{burners} burners" + (f"; the trial ended early: {result.failure_detail}" if result.agent_failure else ""))
    for w in s["wrong"][:20]:
        print(f"  sent {w['sent']!r}\n  got  {w['got']!r}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 2))
