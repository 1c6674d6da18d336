"""Mutants derived from an MCP oracle: each operator, on tools described as an MCP server lists them."""

from evaluator.delta import Shape
from mcpworld.mutants import generate, identifiers, perturbed, tool_infos

ADD = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False}
SET = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}
READ = {"readOnlyHint": True}
TOOLS = tool_infos([
    {"name": "app__add_note", "annotations": ADD, "input_schema": {
        "type": "object", "required": ["fields"],
        "properties": {"fields": {"type": "object"}, "deck": {"type": "string", "default": "Default"},
                       "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": None},
                       "kind": {"enum": ["basic", "cloze", "reversed", "typed", "image"], "default": "basic"},
                       "draft": {"type": "boolean", "default": False}}}},
    {"name": "app__set_option", "annotations": SET, "input_schema": {
        "type": "object", "required": ["deck", "value"],
        "properties": {"deck": {"type": "string"}, "value": {"type": "integer"},
                       "scope": {"$ref": "#/$defs/Scope", "default": "deck"}},
        "$defs": {"Scope": {"enum": ["deck", "collection"], "type": "string"}}}},
    {"name": "app__delete_deck", "annotations": SET, "input_schema": {
        "type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}},
    {"name": "app__list_decks", "annotations": READ, "input_schema": {"type": "object", "properties": {}}},
    {"name": "other__delete_deck", "annotations": SET, "input_schema": {
        "type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}},
])
SHAPE = Shape(keys={"decks": "id", "notes": "id"}, sets=frozenset({"tags"}))
START = {"decks": [{"id": 1, "name": "Default"}, {"id": 2, "name": "Physics"}, {"id": 3, "name": "History"}],
         "notes": [], "prefs": {"rollover": 4}, "tags": ["old"], "current": "Default"}
STEPS = [{"tool": "app__list_decks", "args": {}},
         {"tool": "app__add_note", "args": {"fields": {"Front": "Q", "Back": "A"}, "deck": "Physics", "tags": ["x"],
                                            "kind": "cloze", "draft": False}},
         {"tool": "app__set_option", "args": {"deck": "Physics", "value": 20, "scope": "deck"}}]


def mutants():
    return {m.id: m for m in generate(STEPS, TOOLS, START, SHAPE, {"front": "Q"}, salt="t")}


def test_every_operator_and_nothing_on_a_read_only_step():
    ids = set(mutants())
    assert {"repeat@1", "extra@1", "drop@1", "drop@2", "default@1.deck", "default@1.tags", "default@1.kind",
            "flip@1.draft", "perturb@1.fields.Front", "perturb@1.fields.Back", "extend@1.tags",
            "perturb@2.value", "enum@2.scope=collection", "also@2.scope=collection"} <= ids
    assert not any(i.startswith("also@1.") for i in ids)  # adding again is `extra`'s: also is for a setting
    assert not any(i.endswith("@0") or "@0." in i for i in ids)         # the read-only step
    assert "repeat@2" not in ids and "extra@2" not in ids                 # an idempotent set is not repeated
    assert "default@1.draft" not in ids and "default@2.scope" not in ids  # already the default: no mutant
    enums = [i for i in ids if i.startswith("enum@1.kind=")]
    assert len(enums) == 3 and "enum@1.kind=basic" not in enums           # three others, never the default


def test_steps_of_a_mutant():
    m = mutants()
    assert [s["tool"] for s in m["repeat@1"].steps] == ["app__list_decks", "app__add_note", "app__add_note", "app__set_option"]
    extra = m["extra@1"].steps[2]
    assert extra == {"tool": "app__add_note", "args": {"fields": {"Front": "Qx", "Back": "Ax"}}}
    assert m["enum@2.scope=collection"].steps[2]["args"]["scope"] == "collection"
    also = m["also@2.scope=collection"].steps
    assert [s["args"]["scope"] for s in also[2:]] == ["deck", "collection"]
    assert m["extend@1.tags"].steps[1]["args"]["tags"] == ["x", "xx"]
    assert STEPS[1]["args"]["tags"] == ["x"]  # the oracle itself is never changed


def test_other_targets_come_from_the_start_state_and_are_not_named_by_the_task():
    m = mutants()
    retargets = {i for i in m if i.startswith("retarget@")}
    # "Physics" names a deck: pointed at the decks the task does not name
    assert retargets == {"retarget@1.deck=Default", "retarget@1.deck=History",
                         "retarget@2.deck=Default", "retarget@2.deck=History"}
    assert "perturb@1.deck" not in m  # a name of the start is retargeted, not perturbed
    destroy = {i for i in m if i.startswith("destroy@")}
    assert destroy and all(i.split("=")[1] in ("Default", "History") for i in destroy)
    assert all(i.startswith("destroy@app__delete_deck=") for i in destroy)  # only the solution's server's tools


def test_the_same_inputs_give_the_same_mutants_and_none_twice():
    first, second = mutants(), mutants()
    assert [m.id for m in first.values()] == [m.id for m in second.values()]
    steps = [str(m.steps) for m in first.values()]
    assert len(steps) == len(set(steps)) and str(STEPS) not in steps


def test_identifiers_and_perturbation():
    index = identifiers(START, SHAPE)
    assert index[("decks", "name")] == ["Default", "Physics", "History"]
    assert ("prefs", "key") not in index  # a dict of plain values: its keys are field names
    assert perturbed(3) == 4 and perturbed(2.0) == 3.0 and perturbed(0.0) == 1.0 and perturbed(True) is False
    assert perturbed("{home}/Documents/out.png") == "{home}/Documents/outx.png" and perturbed("Intro") == "Introx"
