"""Key-step matching: several event names per step, and steps that must follow another."""

import json

import pytest

from evaluator.events import Event
from evaluator.verdict import Matcher
from mcpworld import paths
from mcpworld.config.load import load_apps, load_task
from mcpworld.errors import ConfigErrors

T88 = json.loads((paths.TASKS_DIR / "obs" / "88" / "task.json").read_text())


def resolved(tmp_path, key_steps):
    folder = tmp_path / "obs" / "88"
    folder.mkdir(parents=True)
    (folder / "task.json").write_text(json.dumps({**T88, "key_steps": key_steps, "success": {"key_steps": "all"}}))
    return load_task(folder / "task.json", load_apps())


def feed(matcher, *events):
    for i, (name, payload) in enumerate(events):
        matcher.feed(Event(run_id="r", source="frida", app="obs", name=name, payload=payload, seq=i, stream="s"))
    return {r.id: r.reached for r in matcher.results.values()}


STEPS = [{"id": "added", "event": "scene_item_added", "where": {"source": "A"}},
         {"id": "gone", "event": ["source_removed", "scene_item_removed"], "where": {"name": "A"}, "after": "added"}]


def test_any_listed_event_reaches_a_step(tmp_path):
    rt = resolved(tmp_path, STEPS)
    assert feed(Matcher(rt), ("scene_item_added", {"source": "A"}), ("scene_item_removed", {"name": "A"})) == \
        {"added": True, "gone": True}
    assert feed(Matcher(rt), ("scene_item_added", {"source": "A"}), ("source_removed", {"name": "A"})) == \
        {"added": True, "gone": True}


def test_a_step_that_must_follow_ignores_earlier_events(tmp_path):
    rt = resolved(tmp_path, STEPS)
    m = Matcher(rt)
    assert feed(m, ("source_removed", {"name": "A"}), ("scene_item_added", {"source": "A"})) == \
        {"added": True, "gone": False}
    verdict = m.verdict([], None)
    assert not verdict.success and "gone" in verdict.reason


def test_one_event_cannot_reach_a_step_and_the_one_after_it(tmp_path):
    rt = resolved(tmp_path, [{"id": "first", "event": "config_set", "where": {"key": "K"}},
                             {"id": "second", "event": "config_set", "where": {"key": "K"}, "after": "first"}])
    m = Matcher(rt)
    assert feed(m, ("config_set", {"key": "K"})) == {"first": True, "second": False}
    assert feed(m, ("config_set", {"key": "K"})) == {"first": True, "second": True}


def test_a_verdict_never_contradicts_its_own_record(tmp_path):
    """An event landing after the verdict (a milestone late at the end of a trial, or during teardown) must
    not mark a step reached in a record whose reason says it was not."""
    rt = resolved(tmp_path, STEPS[:1])
    m = Matcher(rt)
    verdict = m.verdict([], None)
    feed(m, ("scene_item_added", {"source": "A"}))
    assert not verdict.key_steps[0].reached and "added" in verdict.reason
    assert not m.results["added"].reached
    again = m.verdict([], None)
    assert again.key_steps == verdict.key_steps


def test_states_read_two_ways_compare_what_both_hold(tmp_path):
    """OBS closed by the agent: the end state comes from its files, which lack what only obs-websocket
    tells (thumbnails, audio); that absence is no collateral, but a change in what both hold still is."""
    folder = tmp_path / "obs" / "88"
    folder.mkdir(parents=True)
    (folder / "task.json").write_text(json.dumps({**T88, "success": {"key_steps": "all"}}))  # asks for no change
    rt = load_task(folder / "task.json", load_apps())
    start = {"read_from": "websocket", "program_scene": "Main", "audio": {"Mic": {"muted": False}}, "scene_thumbs": {"Main": []}}
    same = {"read_from": "files", "program_scene": "Main"}
    assert Matcher(rt)._collateral(start, same) == []
    assert Matcher(rt)._collateral(start, {**same, "program_scene": "Extra"}) != []
    assert Matcher(rt)._collateral(start, {**start, "audio": {"Mic": {"muted": True}}}) != []


def test_after_code_entered_into_the_app_nothing_counts(tmp_path):
    """A probe reports code it did not ship before it runs (or instead): what the app reports after it could be
    that code's doing, so it reaches no key step, the final state is not consulted and the verdict is no."""
    rt = resolved(tmp_path, STEPS)
    m = Matcher(rt)
    reached = feed(m, ("scene_item_added", {"source": "A"}),
                   ("code_run", {"surface": "console", "code": "emit('source_removed')", "blocked": True}),
                   ("source_removed", {"name": "A"}))
    assert reached == {"added": True, "gone": False}
    verdict = m.verdict([], None)
    assert not verdict.success and verdict.kscr == 0.5
    assert verdict.in_app_code[0]["surface"] == "console" and "emit(" in verdict.in_app_code[0]["code"]
    assert verdict.reason.startswith("agent code entered into the app (console, refused)")


def test_a_task_that_asks_for_code_takes_it_on_its_surface_only(tmp_path):
    folder = tmp_path / "obs" / "88"
    folder.mkdir(parents=True)
    (folder / "task.json").write_text(json.dumps({**T88, "key_steps": STEPS, "success": {"key_steps": "all"},
                                                  "allows_code": ["script"]}))
    rt = load_task(folder / "task.json", load_apps())
    steps = (("code_run", {"surface": "script", "code": "x = 1"}), ("scene_item_added", {"source": "A"}),
             ("source_removed", {"name": "A"}))
    m = Matcher(rt)
    assert feed(m, *steps) == {"added": True, "gone": True}
    v = m.verdict([], {}, {})
    assert v.success, v.reason
    m = Matcher(rt)
    assert feed(m, ("code_run", {"surface": "console", "code": "x = 1"}), *steps[1:]) == {"added": False, "gone": False}
    assert not m.verdict([], None).success


def test_a_task_that_asks_for_one_extension_takes_that_one_only(tmp_path):
    """allows_code {surface, code}: what the surface records must match whole: the asked extension's folder and
    index, not another extension beside it, nor the asked one written again in place."""
    folder = tmp_path / "obs" / "88"
    folder.mkdir(parents=True)
    allowed = {"surface": "script", "code": r"move_to good\.one-1\.0\.0|close_write extensions\.json"}
    (folder / "task.json").write_text(json.dumps({**T88, "key_steps": STEPS, "success": {"key_steps": "all"},
                                                  "allows_code": [allowed]}))
    rt = load_task(folder / "task.json", load_apps())
    work = (("scene_item_added", {"source": "A"}), ("source_removed", {"name": "A"}))
    for entered, passes in ((["move_to good.one-1.0.0", "close_write extensions.json"], True),
                            (["move_to good.one-1.0.0", "move_to evil.one-1.0.0"], False),
                            (["move_to good.one-1.0.0", "close_write good.one-1.0.0"], False),
                            (["move_to good.one-1.0.0x"], False)):
        m = Matcher(rt)
        feed(m, *[("code_run", {"surface": "script", "code": c}) for c in entered], *work)
        assert m.verdict([], {}, {}).success == passes, entered
    (folder / "task.json").write_text(json.dumps({**T88, "key_steps": STEPS, "success": {"key_steps": "all"},
                                                  "allows_code": [{"surface": "script", "code": "(unclosed"}]}))
    with pytest.raises(ConfigErrors, match=r"allows_code.*not a regular expression"):
        load_task(folder / "task.json", load_apps())
