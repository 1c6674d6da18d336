"""Typed text arrives whole in the real apps on a loaded machine (issue 34 §1).

Each app's field (`apps/<app>/typing.json`, the bench's `app_typing` part): mixed texts typed through the
computer tool, each read back from the app's own event, a CPU burner beside; two apps per CI run, in turn by
commit (each about a minute). The long version is `mcpworld bench run --part app_typing --size full` (20,000
characters per app, two burners, against the same texts with none).

And OBS's Image File dialog, every run: paths typed each into a folder the dialog has not listed yet, read back
from OBS's own `source_settings_updated` event (tests/soak/obs_typing.py). Before the fixes in apps/obs/NOTES.md
("Lost input": OBS's OpenGL module drained the X connection it shares with Qt; a Shift sent in one burst with
its key) such a path arrived wrong about once in forty."""

import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest

from mcpworld import paths
from mcpworld.bench.app_typing import RECIPE, TypingField, describe, type_into
from mcpworld.config.load import load_tasks
from mcpworld.verify import in_turn

SOAK = Path(__file__).resolve().parents[1] / "soak" / "obs_typing.py"
TASKS = load_tasks()
WITH_FIELD = sorted(p.parent.name for p in paths.APPS_DIR.glob(f"*/{RECIPE}"))


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


def test_every_app_has_a_typing_field():
    apps = {rt.app.id for rt in TASKS.values() if rt.app.available}
    assert set(WITH_FIELD) == apps, set(apps) ^ set(WITH_FIELD)
    for app in WITH_FIELD:
        f = TypingField.of(paths.APPS_DIR / app)
        assert f.task in TASKS and "{text}" in str(f.enter), app


@pytest.mark.parametrize("app", in_turn(WITH_FIELD, 2))
async def test_texts_typed_into_the_app_arrive_whole_beside_a_cpu_burner(app, tmp_path):
    rt = TASKS[TypingField.of(paths.APPS_DIR / app).task]
    typed = await type_into(rt, 300, tmp_path / "trial", burners=1)
    assert typed.failure is None, describe(typed, 1)
    assert typed.chars >= 300 and typed.rates(), describe(typed, 1)
    assert typed.wrong == [], describe(typed, 1) + "".join(f"\n  {a.sent!r} arrived as {a.got!r}" for a in typed.wrong)


def test_a_malformed_typing_field_names_its_file_and_field(tmp_path):
    from mcpworld.errors import ConfigError

    (tmp_path / RECIPE).write_text('{"about": "x", "task": "anki/161", "enter": [], "event": "searched", '
                                   '"value": "query", "max_len": 4}')
    with pytest.raises(ConfigError) as e:
        TypingField.of(tmp_path)
    assert e.value.file.endswith(RECIPE) and e.value.field == "max_len", str(e.value)
    (tmp_path / RECIPE).write_text('{"about": "x",')
    with pytest.raises(ConfigError) as e:
        TypingField.of(tmp_path)
    assert e.value.field == "line 1", str(e.value)
