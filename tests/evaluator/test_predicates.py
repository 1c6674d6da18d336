import pytest

from evaluator.predicates import PredicateError, compile_where

NOTE = {"fields": {"Front": "To be", "Back": "x=1"}, "tags": ["quote", "Lit"], "deck": "Default",
        "cards": [{"flag": 1, "due_days": 3}, {"flag": 0, "due_days": None}], "n": 5}


@pytest.mark.parametrize("where,expected", [
    ({"fields.Front": "To be"}, True),
    ({"fields.Front": "to be"}, False),
    ({"fields.Missing": "x"}, False),
    ({"tags": {"$contains": "quote"}}, True),
    ({"tags": {"$icontains": "lit"}}, True),
    ({"tags": {"$contains": "lit"}}, False),
    ({"fields.Front": {"$regex": "^To"}}, True),
    ({"n": {"$gte": 5, "$lt": 6}}, True),
    ({"n": {"$gt": 5}}, False),
    ({"n": {"$gt": "5"}}, False),  # no number/string mixing
    ({"deck": {"$in": ["Default", "X"]}}, True),
    ({"deck": {"$nin": ["Default"]}}, False),
    ({"deck": {"$ne": "X"}}, True),
    ({"deck": {"$not": {"$eq": "Default"}}}, False),
    ({"cards": {"$any": {"flag": 1}}}, True),
    ({"cards": {"$all": {"flag": 1}}}, False),
    ({"cards": {"$none": {"flag": 7}}}, True),
    ({"cards": {"$count": {"where": {"flag": {"$in": [0, 1]}}, "is": 2}}}, True),
    ({"cards": {"$len": {"$gte": 3}}}, False),
    ({"cards.0.due_days": 3}, True),
    ({"missing": {"$exists": False}}, True),
    ({"deck": {"$exists": True}}, True),
    ({}, True),
])
def test_where(where, expected):
    assert compile_where(where)(NOTE) is expected


@pytest.mark.parametrize("where,path", [
    ({"x": {"$bogus": 1}}, "where.x.$bogus"),
    ({"x": {"$regex": "("}}, "where.x.$regex"),
    ({"x": {"$in": 3}}, "where.x.$in"),
    ({"x": {"$any": {"y": {"$gte": []}}}}, "where.x.$any.y.$gte"),
    ({"x": {"$eq": 1, "plain": 2}}, "where.x"),
    ({"$x": 1}, "where.$x"),
])
def test_bad_predicates_name_the_path(where, path):
    with pytest.raises(PredicateError) as e:
        compile_where(where)
    assert e.value.path == path


def test_contains_all():
    pred = compile_where({"scenes": {"$contains_all": ["A", "B"]}})
    assert pred({"scenes": ["B", "C", "A"]})
    assert not pred({"scenes": ["A", "C"]})
    assert not pred({"scenes": None})


def test_a_key_holding_dots_is_matched_whole():
    state = {"prefs": {"scheduling.rollover": 6, "editing.default_search_text": "cs"}, "a": {"b": {"c": 1}}}
    assert compile_where({"prefs.scheduling.rollover": 6})(state)
    assert not compile_where({"prefs.scheduling.rollover": 5})(state)
    assert compile_where({"prefs.editing.default_search_text": "cs"})(state)
    assert compile_where({"a.b.c": 1})(state) and not compile_where({"a.b.d": {"$exists": True}})(state)
