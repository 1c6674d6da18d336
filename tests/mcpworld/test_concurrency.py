"""gather_all: a stopped run (its task cancelled, as Ctrl-C and SIGTERM do) returns only once every trial
has ended, its teardown included; asyncio.gather returns at the first cancelled child, a trial that was only
waiting for its turn, which is how `tasks verify` left VS Code running when it was stopped."""

import asyncio

import pytest

from mcpworld.concurrency import gather_all


async def stopped(gather) -> list[str]:
    ended: list[str] = []

    async def running():  # a started trial: its teardown takes a while
        try:
            await asyncio.sleep(60)
        finally:
            await asyncio.sleep(0.2)
            ended.append("torn down")

    async def waiting():  # a trial waiting for its turn
        await asyncio.Event().wait()

    run = asyncio.ensure_future(gather(running(), waiting()))
    await asyncio.sleep(0.05)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    seen = list(ended)
    await asyncio.sleep(0.3)  # what the event loop's close would have cut short
    return seen


def test_a_stopped_gather_waits_for_every_teardown():
    assert asyncio.run(stopped(gather_all)) == ["torn down"]
    assert asyncio.run(stopped(asyncio.gather)) == []  # the control: gather alone returns before it


def test_a_failure_stops_and_waits_for_the_others():
    async def main():
        ended = []

        async def fails():
            await asyncio.sleep(0.05)
            raise ValueError("a bug in one trial")

        async def other():
            try:
                await asyncio.sleep(60)
            finally:
                await asyncio.sleep(0.1)
                ended.append("torn down")

        with pytest.raises(ValueError):
            await gather_all(fails(), other())
        return ended

    assert asyncio.run(main()) == ["torn down"]
    assert asyncio.run(_values()) == [1, 2]


async def _values():
    async def v(x):
        await asyncio.sleep(0.01 * (3 - x))
        return x

    return await gather_all(v(1), v(2))
