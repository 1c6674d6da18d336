"""Typed text arrives whole on a loaded machine: the computer tool types paths into Qt's own file dialog
(a completer that loads each folder in the background and changes the field by itself) and lines of mixed
characters, with two CPU burners beside, and every text is read back from the field. `mcpworld bench`
keeps the rate and the same count for a burst at xdotool's pace (the tool's typing before it waited for each
character to be drawn: about one path in seventy came back garbled there under load)."""

from mcpworld.bench.typed_text import type_and_read


async def test_typed_texts_arrive_whole_beside_two_cpu_burners():
    paced, _ = await type_and_read(45, baseline=False)
    assert paced.texts == 45 and paced.chars > 2000
    assert paced.wrong == [], paced.wrong
