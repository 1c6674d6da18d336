"""Typed text arrives whole on a loaded machine: the computer tool types paths into Qt's own file dialog
(a completer that loads each folder in the background and changes the field by itself) and lines of mixed
characters, with two CPU burners beside, and every text is read back from the field. Typing is paced by
the echo inside the focused window only: drawing around it (a live preview) is not an echo. `mcpworld bench`
keeps the rate and the same count for a burst at xdotool's pace (the tool's typing before it waited for each
character to be drawn: about one path in seventy came back garbled there under load)."""

import pytest

from mcpworld.bench.typed_text import type_and_read


@pytest.mark.parametrize("files", [False, True], ids=["folders", "files"])
async def test_typed_texts_arrive_whole_beside_two_cpu_burners(files):
    """Folders: as OBS's Import Profile; files: a completer popup that offers a folder's files as the name is
    typed, as OBS's Image File dialog. Both over a window that another process repaints as OBS's preview."""
    paced, _ = await type_and_read(30, baseline=False, files=files)
    assert paced.texts == 30 and paced.chars > 1300
    assert paced.wrong == [], paced.wrong
