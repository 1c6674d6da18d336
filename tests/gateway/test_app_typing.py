"""Typed text arrives whole in a real app on a loaded machine (issue 34 §1), the short version of
tests/soak/obs_typing.py: paths typed into OBS's Image File dialog through the computer tool, each into a folder
the dialog has not listed yet, each read back from OBS's own `source_settings_updated` event, a CPU burner
beside. Before the fixes in apps/obs/NOTES.md ("Lost input": OBS's OpenGL module drained the X connection it
shares with Qt; a Shift sent in one burst with its key) such a path arrived wrong about once in forty."""

import asyncio
import importlib.util
import sys
from pathlib import Path


SOAK = Path(__file__).resolve().parents[1] / "soak" / "obs_typing.py"


def _soak():
    spec = importlib.util.spec_from_file_location("obs_typing", SOAK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_paths_typed_into_obs_arrive_whole_beside_a_cpu_burner(tmp_path):
    burner = await asyncio.create_subprocess_exec(sys.executable, "-c", "while True: pass")
    try:
        sent, wrong, result = await _soak().type_paths(12, tmp_path / "trial")
    finally:
        burner.kill()
        await burner.wait()
    assert result.agent_failure is None, result.failure_detail
    assert len(sent) == 12 and sum(map(len, sent)) > 600
    assert wrong == [], [sent[i] for i in wrong]
