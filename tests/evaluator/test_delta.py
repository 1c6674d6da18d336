"""The expected delta: actual changes record by record, matched one to one against what a task expects."""

import copy

import pytest

from evaluator.delta import ADDED, CHANGED, REMOVED, Expected, Shape, Tolerance, changes, match, parse_count, records
from evaluator.predicates import compile_where

SHAPE = Shape(keys={"notes": "id", "notes[*].cards": "id", "scenes": "id", "scene_items[*]": "source"},
              sets=frozenset({"tags", "notes[*].tags"}), ignore=frozenset({"read_from"}))
START = {
    "notes": [{"id": 1, "front": "a", "tags": ["leech"], "cards": [{"id": 11, "suspended": False}, {"id": 12, "suspended": False}]},
              {"id": 2, "front": "b", "tags": ["leech"], "cards": [{"id": 21, "suspended": True}]},
              {"id": 3, "front": "c", "tags": [], "cards": [{"id": 31, "suspended": False}]}],
    "scenes": [{"id": "s1", "name": "Main"}, {"id": "s2", "name": "Break"}],
    "scene_items": {"Main": [{"source": "Cam", "visible": True}]},
    "current": "Main",
    "prefs": {"rollover": 4, "learn": 20},
    "tags": ["leech"],
    "read_from": "bridge",
}


def edit(**over):
    state = copy.deepcopy(START)
    for k, v in over.items():
        state[k] = v(state[k]) if callable(v) else v
    return state


def W(where):
    return compile_where(where, "t")


def exp(collection, kind, where, to=None, fields=None, count=1):
    from evaluator.delta import parse_count as pc, where_fields
    low, high, every = pc(count)
    return Expected(collection, kind, W(where), W(to) if to else None,
                    tuple(fields) if fields else (where_fields(to) if to else None), low, high, every, f"{collection} {kind}")


def verdict(end, expected, tolerances=()):
    return match(changes(START, end, SHAPE), list(expected), list(tolerances), START, SHAPE)


def test_nothing_changed_is_no_change_and_ignored_fields_never_are():
    assert changes(START, edit(read_from="file"), SHAPE) == []


def test_records_nested_collections_and_values_each_change_on_their_own():
    def suspend(notes):
        notes[0]["cards"][0]["suspended"] = True
        notes[2]["tags"].append("x")
        return notes
    end = edit(notes=suspend, current="Break", prefs={"rollover": 5, "learn": 20},
               scene_items={"Main": [{"source": "Cam", "visible": False}, {"source": "Logo", "visible": True}]})
    got = {c.path: c for c in changes(START, end, SHAPE)}
    assert set(got) == {"notes[id=1].cards[id=11]", "notes[id=3].tags[x]", "current", "prefs[rollover]",
                        "scene_items[Main][source=Cam]", "scene_items[Main][source=Logo]"}
    card = got["notes[id=1].cards[id=11]"]
    assert card.kind == CHANGED and card.fields == ("suspended",) and card.collection == "notes[*].cards"
    assert card.before["_parent"]["id"] == 1  # a nested record sees its enclosing one
    assert got["notes[id=3].tags[x]"].kind == ADDED and got["notes[id=3].tags[x]"].collection == "notes[*].tags"
    assert got["scene_items[Main][source=Logo]"].after["_parent"]["key"] == "Main"
    assert got["current"].fields == ("value",) and got["prefs[rollover]"].collection == "prefs"


def test_a_record_added_brings_its_nested_records_with_it():
    end = edit(notes=lambda n: n + [{"id": 4, "front": "d", "tags": ["t"], "cards": [{"id": 41, "suspended": False}]}])
    assert [(c.path, c.kind) for c in changes(START, end, SHAPE)] == [("notes[id=4]", ADDED)]


def test_add_exactly_one_and_nothing_else():
    one = edit(scenes=lambda s: s + [{"id": "s3", "name": "Outro"}])
    add = exp("scenes", ADDED, {"name": "Outro"})
    assert verdict(one, [add]).ok
    two = edit(scenes=lambda s: s + [{"id": "s3", "name": "Outro"}, {"id": "s4", "name": "Outro"}])
    out = verdict(two, [add])
    assert not out.ok and [c.path for c in out.collateral] == ["scenes[id=s4]"] and not out.unmet
    switched = edit(scenes=lambda s: s + [{"id": "s3", "name": "Outro"}], current="Outro")
    assert [c.path for c in verdict(switched, [add]).collateral] == ["current"]
    renamed = edit(scenes=[{"id": "s1", "name": "Outro"}, {"id": "s2", "name": "Break"}])
    out = verdict(renamed, [add])
    assert out.unmet == ["scenes added: 0 of 1"] and [c.path for c in out.collateral] == ["scenes[id=s1]"]


def test_change_every_matching_record_and_only_those():
    """Suspend every card of a note tagged leech: the one already suspended needs nothing."""
    every = exp("notes[*].cards", CHANGED, {"_parent.tags": {"$contains": "leech"}}, {"suspended": True}, count="all")

    def suspended(*ids):
        def f(notes):
            for n in notes:
                for c in n["cards"]:
                    c["suspended"] = c["suspended"] or c["id"] in ids
            return notes
        return f
    assert verdict(edit(notes=suspended(11, 12)), [every]).ok
    missed = verdict(edit(notes=suspended(11)), [every])
    assert missed.unmet == ["notes[*].cards changed: 1 of 2"]
    too_many = verdict(edit(notes=suspended(11, 12, 31)), [every])
    assert [c.path for c in too_many.collateral] == ["notes[id=3].cards[id=31]"]

    def untagged(notes):
        suspended(11, 12)(notes)
        notes[0]["tags"] = []
        return notes
    assert [c.path for c in verdict(edit(notes=untagged), [every]).collateral] == ["notes[id=1].tags[leech]"]


def test_a_change_touches_only_the_fields_it_names():
    to_five = exp("prefs", CHANGED, {"key": "rollover"}, {"value": 5})
    assert verdict(edit(prefs={"rollover": 5, "learn": 20}), [to_five]).ok
    both = verdict(edit(prefs={"rollover": 5, "learn": 10}), [to_five])
    assert [c.path for c in both.collateral] == ["prefs[learn]"]
    wrong = verdict(edit(prefs={"rollover": 6, "learn": 20}), [to_five])
    assert wrong.unmet and wrong.collateral
    front = exp("notes", CHANGED, {"id": 1}, {"front": "A"})
    also_tagged = edit(notes=lambda n: [{**n[0], "front": "A", "tags": ["leech", "x"]}, *n[1:]])
    out = verdict(also_tagged, [front])
    assert out.ok is False and [c.path for c in out.collateral] == ["notes[id=1].tags[x]"]
    moved = edit(notes=lambda n: [{**n[0], "front": "A", "deck": "Other"}, *n[1:]])
    out = verdict(moved, [front])  # one record changed in a field the change does not name: no match at all
    assert out.unmet and [c.path for c in out.collateral] == ["notes[id=1]"]


def test_optional_counts_and_tolerances():
    maybe = exp("scenes", ADDED, {"name": "Physics"}, count="0..1")
    assert verdict(START, [maybe]).ok
    assert verdict(edit(scenes=lambda s: s + [{"id": "s3", "name": "Physics"}]), [maybe]).ok
    twice = edit(scenes=lambda s: s + [{"id": "s3", "name": "Physics"}, {"id": "s4", "name": "Physics"}])
    assert len(verdict(twice, [maybe]).collateral) == 1
    switched = edit(current="Break")
    why = Tolerance("current", "the view follows", frozenset({CHANGED}))
    out = verdict(switched, [maybe], [why])
    assert out.ok and out.tolerated == [("current", "the view follows")]
    fields_only = Tolerance("notes", "bookkeeping", frozenset({CHANGED}), fields=("mod",))
    modded = edit(notes=lambda n: [{**n[0], "mod": 2}, *n[1:]])
    assert verdict(modded, [], [fields_only]).ok
    assert not verdict(edit(notes=lambda n: [{**n[0], "mod": 2, "front": "z"}, *n[1:]]), [], [fields_only]).ok
    # a tolerated field may change along with an expected change
    front = exp("notes", CHANGED, {"id": 1}, {"front": "A"})
    assert verdict(edit(notes=lambda n: [{**n[0], "mod": 2, "front": "A"}, *n[1:]]), [front], [fields_only]).ok


def test_matching_is_one_to_one_and_finds_the_assignment_that_fits():
    """Two expectations that overlap: a greedy match could spend the broad one on the narrow one's change."""
    broad = exp("scenes", ADDED, {"name": {"$regex": "^S"}})
    narrow = exp("scenes", ADDED, {"name": "Start"})
    end = edit(scenes=lambda s: s + [{"id": "a", "name": "Start"}, {"id": "b", "name": "Stop"}])
    assert verdict(end, [broad, narrow]).ok
    assert not verdict(edit(scenes=lambda s: s + [{"id": "a", "name": "Start"}]), [broad, narrow]).ok


def test_records_of_a_collection_in_a_state():
    assert [r["id"] for r in records(START, "notes[*].cards", SHAPE)] == [11, 12, 21, 31]
    assert [r["source"] for r in records(START, "scene_items[*]", SHAPE)] == ["Cam"]
    assert records(START, "current", SHAPE) == [{"value": "Main"}]
    assert [r["value"] for r in records(START, "tags", SHAPE)] == ["leech"]


@pytest.mark.parametrize("count,expected", [(2, (2, 2, False)), ("0..1", (0, 1, False)), ("1..", (1, None, False)),
                                            ("all", (0, 0, True))])
def test_counts(count, expected):
    assert parse_count(count) == expected


@pytest.mark.parametrize("count", ["two", "3..1", -1, True])
def test_bad_counts(count):
    with pytest.raises(ValueError):
        parse_count(count)


def test_removed_is_matched_on_the_record_as_it_was():
    gone = exp("scenes", REMOVED, {"name": "Break"})
    assert verdict(edit(scenes=lambda s: s[:1]), [gone]).ok
    assert verdict(edit(scenes=lambda s: s[1:]), [gone]).unmet


def test_a_derived_field_of_records_is_never_compared():
    shape = Shape(keys=SHAPE.keys, sets=SHAPE.sets, ignore=frozenset({"read_from", "notes[*].front", "notes[*].cards[*].suspended"}))
    def f(notes):
        notes[0]["front"] = "z"
        notes[0]["cards"][0]["suspended"] = True
        return notes
    assert changes(START, edit(notes=f), shape) == []
