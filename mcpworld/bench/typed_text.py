"""Typed text arriving whole, on a loaded machine: the computer tool's `type` into Qt's own file dialog
(a completer that loads folders in the background and changes the field by itself, as OBS's Import Profile
dialog does), over a window another process repaints (as OBS's preview around its dialogs), while CPU
burners run. Each text is a path into a folder the dialog has not seen yet (the bench's end in a file
whose neighbours share its first letters, which the completer pops up), or a line of mixed characters;
each is read back from the field. The baseline is the same texts sent in one burst through libxdo at
xdotool's pace (the tool's typing before it waited for each character to be drawn and before it made a
round trip to the server between a modifier and its key)."""

from __future__ import annotations

import asyncio
import random
import string
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from mcpworld.bench.stats import Figure, stat
from mcpworld.envs.local import LocalEnvironment

TARGET = Path(__file__).with_name("typed_text_target.py")
BURN = "while True: pass"
XDO_DELAY_US = 12_000  # the baseline's pace between characters (xdotool's default)
MIXED = string.ascii_letters + string.digits + "/._-~:;,!?@#%+=()[]{}<>'\" "
REMAPPED = "éüßñø€£§°µ"  # on no key of the server's keymap: the typing maps a spare key for each


@dataclass
class Typed:
    texts: int = 0
    chars: int = 0
    wrong: list[tuple[str, str]] = field(default_factory=list)  # (sent, read back)
    rates: list[float] = field(default_factory=list)            # characters per second, per text


NEIGHBOURS = ("logo.png", "logo.jpg", "loop.mp4", "background.png", "intro.mov")


def texts(folder: Path, n: int, files: bool = False, remapped: bool = False, seed: int = 7) -> list[str]:
    """n texts: two paths into fresh folders (each with neighbours the completer offers) for each mixed line.
    With `files`, each path ends in a file of a folder whose other files share its first letters (the
    completer's popup shows and changes as the name is typed, as in OBS's Image File dialog). With
    `remapped`, the mixed lines hold characters no key of the keymap has as well."""
    rnd, out = random.Random(seed), []
    chars = MIXED + REMAPPED if remapped else MIXED
    for i in range(n):
        if i % 3 == 2:
            out.append("".join(rnd.choice(chars) for _ in range(rnd.randint(20, 60))))
            continue
        base = folder / f"t{i}"
        for sub in ("Documents/profiles/Streaming", "Desktop", "Downloads", "Dev/src", "Media"):
            (base / sub).mkdir(parents=True)
        if not files:
            out.append(f"{base}/Documents/profiles/Streaming")
            continue
        for name in NEIGHBOURS:
            (base / "Media" / name).touch()
        out.append(f"{base}/Media/{NEIGHBOURS[i % 2]}")
    return out


async def type_and_read(n: int, burners: int = 2, baseline: bool = True, files: bool = False,
                        remapped: bool = False) -> tuple[Typed, Typed]:
    """(the tool's typing, the burst baseline), n texts each (the baseline's none without `baseline`), `burners`
    busy processes beside; with `files`, into a dialog that picks a file (see `texts`)."""
    import xdo

    from gateway.tools.computer import ComputerTool

    env = LocalEnvironment(1280, 800)
    await env.open()
    hogs = [await asyncio.create_subprocess_exec(sys.executable, "-c", BURN) for _ in range(burners)]
    try:
        with tempfile.TemporaryDirectory(prefix="mcpworld-typing-") as tmp:
            proc = await env.spawn([sys.executable, str(TARGET), tmp, "file" if files else "dir"], privileged=True, stdout=asyncio.subprocess.PIPE,
                                   env={"QT_QPA_PLATFORM": "xcb"}, log_name="typing-target")
            await env.wait_window("^mcpworld-typing$", 30)
            await env.settle("^mcpworld-typing$", 0.3, timeout=15)
            tool = ComputerTool(env.display)
            await tool.start()
            win = getattr(xdo.CURRENTWINDOW, "value", xdo.CURRENTWINDOW)
            paced, burst = Typed(), Typed()
            try:
                for kind, out in (("paced", paced), ("burst", burst))[:2 if baseline else 1]:
                    for text in texts(Path(tmp) / kind, n, files, remapped):
                        t = time.perf_counter()
                        if kind == "paced":
                            await tool.call("computer", {"action": "type", "text": text})
                        else:
                            await asyncio.to_thread(tool._xdo.enter_text_window, win, text.encode(), XDO_DELAY_US)
                        out.rates.append(len(text) / (time.perf_counter() - t))
                        await tool.call("computer", {"action": "key", "text": "F12"})
                        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().rstrip("\n")
                        got = line.removeprefix("typed:")
                        out.texts, out.chars = out.texts + 1, out.chars + len(text)
                        if got != text:
                            out.wrong.append((text, got))
            finally:
                await tool.close()
                proc.kill()
        return paced, burst
    finally:
        for h in hogs:
            h.kill()
            await h.wait()
        await env.close()


async def measure(n: int) -> list[Figure]:
    paced, burst = await type_and_read(n, files=True)
    return [Figure(part="typing", name="typed characters per second, two CPU burners beside", unit="chars/s",
                   value=stat(paced.rates), baseline_name="one burst at xdotool's pace (the texts are not waited on)",
                   baseline=stat(burst.rates),
                   note=f"texts read back wrong: {len(paced.wrong)} of {paced.texts} ({paced.chars} characters) typed "
                        f"by the tool, {len(burst.wrong)} of {burst.texts} in one burst"
                        + (f"; first wrong: {paced.wrong[0]!r}" if paced.wrong else ""))]
