"""The start-to-end state diff and the changes a task allows."""

from evaluator.predicates import compile_where
from evaluator.statediff import collateral, diff

START = {
    "notes": [{"id": 1, "tags": ["science"], "cards": [{"suspended": False}]},
              {"id": 2, "tags": ["math"], "cards": [{"suspended": False}]}],
    "prefs": {"rollover": 4, "learn": 20},
    "inputs": {"Title": {"kind": "text", "settings": {"text": "Hi"}}, "Logo": {"kind": "image", "settings": {}}},
    "scenes": ["Main", "Break"],
    "read_from": "bridge",
}


def changed(**over):
    import copy
    state = copy.deepcopy(START)
    state.update(over)
    return state


KEYS = {"notes": "id"}


def test_no_change_no_diff():
    assert diff(START, changed(read_from="file"), KEYS, ["read_from"]) == []


def test_records_are_matched_by_key_and_walked_to_the_leaf():
    end = changed(notes=[{"id": 2, "tags": ["math"], "cards": [{"suspended": False}]},
                         {"id": 1, "tags": ["science"], "cards": [{"suspended": True}]},
                         {"id": 3, "tags": [], "cards": []}])
    changes = {c.path: c for c in diff(START, end, KEYS)}
    assert set(changes) == {"notes[id=1].cards", "notes[id=3]"}  # reordering is not a change
    assert changes["notes[id=3]"].kind == "added" and changes["notes[id=1].cards"].records[0]["id"] == 1


def test_dicts_by_key_scalars_and_scalar_lists_as_wholes():
    end = changed(prefs={"rollover": 5, "learn": 20}, scenes=["Break", "Main"],
                  inputs={"Title": {"kind": "text", "settings": {"text": "Bye"}}})
    paths = {c.path for c in diff(START, end, KEYS)}
    assert paths == {"prefs[rollover]", "scenes", "inputs[Title].settings.text", "inputs[Logo]"}


def test_only_what_the_task_allows_passes():
    over_broad = changed(notes=[{"id": 1, "tags": ["science"], "cards": [{"suspended": True}]},
                                {"id": 2, "tags": ["math"], "cards": [{"suspended": True}]}])
    allowed = {"notes": compile_where({"tags": {"$contains": "science"}}, "x")}
    bad = collateral(diff(START, over_broad, KEYS), allowed)
    assert [c.path for c in bad] == ["notes[id=2].cards"]
    right = changed(notes=[{"id": 1, "tags": ["science"], "cards": [{"suspended": True}]}, START["notes"][1]])
    assert collateral(diff(START, right, KEYS), allowed) == []
    assert collateral(diff(START, over_broad, KEYS), {"notes": True}) == []
    renamed = changed(inputs={**START["inputs"], "Title": {"kind": "text", "settings": {"text": "Bye"}}})
    assert collateral(diff(START, renamed, KEYS), {"inputs": compile_where({"key": "Title"}, "x")}) == []


def test_nested_records_sets_and_the_enclosing_record_a_where_sees():
    start = {"scene_items": {"Main": [{"source": "Title", "visible": True}, {"source": "Logo", "visible": True}]},
             "tags": ["a", "b"]}
    end = {"scene_items": {"Main": [{"source": "Title", "visible": False}, {"source": "Logo", "visible": True},
                                    {"source": "New", "visible": True}]}, "tags": ["b", "c"]}
    changes = diff(start, end, {"scene_items[*]": "source"}, sets=["tags"])
    assert {c.path for c in changes} == {"scene_items[Main][source=Title].visible", "scene_items[Main][source=New]",
                                         "tags[a]", "tags[c]"}
    only_new = {"scene_items": compile_where({"source": "New"}, "x"), "tags": compile_where({"value": "c"}, "x")}
    assert {c.path for c in collateral(changes, only_new)} == {"scene_items[Main][source=Title].visible", "tags[a]"}
    whole_scene = {"scene_items": compile_where({"key": "Main"}, "x"), "tags": True}
    assert collateral(changes, whole_scene) == []
