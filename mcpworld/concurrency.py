"""Running trials side by side."""

from __future__ import annotations

import asyncio
from typing import Awaitable, TypeVar

T = TypeVar("T")


async def gather_all(*aws: Awaitable[T]) -> list[T]:
    """asyncio.gather, except that a stop (Ctrl-C, SIGTERM: the caller cancelled) or a failure returns only
    once every one has ended. gather itself ends at its first cancelled child, a trial that was only waiting
    for its turn, while a started one still tears down and records itself; the event loop's close then
    cancels that teardown again and cuts it short, leaving the app running and the trial unrecorded."""
    tasks = [asyncio.ensure_future(a) for a in aws]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            if not t.cancelling():  # a second cancel would cut a teardown that the first one started
                t.cancel()
        await asyncio.wait(tasks)
        raise
