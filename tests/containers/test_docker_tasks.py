"""Same verdicts in containers. Every task's oracle (one API mode) and null agent ran in a container when it
was last verified (`mcpworld tasks verify --backend docker`, checked by tests/mcpworld/test_tasks.py); CI
re-proves a sample with today's code: each app's bench task and one more chosen with a fixed seed, oracle
and null, GUI samples whose reference solutions click the same coordinates as on the local desktop, and
one task of each app on the KDE image."""

import hashlib

import pytest

from mcpworld.agents import make_agent
from mcpworld.config.load import load_tasks
from mcpworld.trial import TrialOptions, run_trial
from mcpworld.verify import SAMPLE_SEED, lacks_build

TASKS = load_tasks()
# a task hooking internal functions runs only where its app's source build is (left to its records otherwise)
READY = sorted(key for key, rt in TASKS.items() if rt.task.status == "ready" and not lacks_build(rt))
GUI_SAMPLES = ["anki/147", "obs/78", "qbittorrent/172", "blender/183", "qgis/73", "freecad/128", "vscode/6", "joplin/118"]
KDE_SAMPLES = ["anki/161", "obs/78", "qbittorrent/178", "blender/185", "qgis/74", "freecad/127", "vscode/1", "joplin/110"]  # one task of each app
PER_APP = 1


def sample() -> list[str]:
    chosen = []
    for app in sorted({TASKS[k].app.id for k in READY}):
        keys = [k for k in READY if TASKS[k].app.id == app]
        bench = TASKS[keys[0]].app.bench
        first = [f"{app}/{bench.task}"] if bench and f"{app}/{bench.task}" in keys else []
        rest = sorted((k for k in keys if k not in first), key=lambda k: hashlib.sha256(f"{SAMPLE_SEED}:{k}".encode()).hexdigest())
        chosen += first + rest[:PER_APP]
    return chosen


SAMPLE = sample()


def api_mode(key: str) -> str:
    modes = TASKS[key].task.modes
    return "mcp" if "mcp" in modes else "hybrid" if "hybrid" in modes else modes[0]


def describe(result):
    steps = ", ".join(f"{s.id}={'y' if s.reached else 'n'}" for s in result.verdict.key_steps)
    return f"{result.failure}: {result.failure_detail} [{steps}]"


async def run(key: str, agent: str, mode: str, tmp_path, desktop: str = "xfce"):
    opts = TrialOptions(mode=mode, backend="docker", desktop=desktop)
    return await run_trial(TASKS[key], make_agent(agent), opts, tmp_path / "trial")


@pytest.mark.parametrize("key", SAMPLE)
async def test_oracle_passes_in_a_container(key, tmp_path):
    result = await run(key, "oracle", api_mode(key), tmp_path)
    assert result.success and result.kscr == 1.0, describe(result)
    assert result.agent_failure is None, result.failure_detail


@pytest.mark.parametrize("key", SAMPLE)
async def test_null_agent_fails_in_a_container(key, tmp_path):
    result = await run(key, "null", api_mode(key), tmp_path)
    assert not result.success and result.failure == "evaluated_failed", describe(result)
    assert result.kscr < 1.0


@pytest.mark.parametrize("key", GUI_SAMPLES)
async def test_gui_oracle_passes_in_a_container(key, tmp_path):
    result = await run(key, "oracle", "gui", tmp_path)
    assert result.success and result.kscr == 1.0, describe(result)
    assert set(result.tool_calls_by_kind) == {"gui"}


@pytest.mark.parametrize("key", KDE_SAMPLES)
async def test_a_task_on_the_kde_desktop(key, tmp_path):
    result = await run(key, "oracle", api_mode(key), tmp_path, desktop="kde")
    assert result.success and result.kscr == 1.0, describe(result)
    assert (tmp_path / "trial" / "final.png").exists()
