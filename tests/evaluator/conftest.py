"""The evaluator of one run, listening, for the tests of its protocol and of the probe clients that speak it."""

import pytest

from evaluator.server import Evaluator


@pytest.fixture
async def evaluator(tmp_path):
    e = Evaluator("run1", "testapp", tmp_path / "events.jsonl")
    await e.start()
    yield e
    await e.stop()
