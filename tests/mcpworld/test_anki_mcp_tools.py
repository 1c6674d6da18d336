"""The Anki MCP server as a general tool, in a real trial: every collection preference and deck option is
reachable by Anki's own names, wrong names get a clear error, and a change the task did not ask for
(a deck option, a preference) is seen by the start-to-end state diff and fails the trial as collateral."""

from mcpworld.results import Failure
from tests.mcpworld.test_trial import ADD_161, run_trial, structured


async def test_general_tools_and_collateral(tmp_path):
    seen = {}

    async def script(ctx, trial):
        call = ctx.tools.call
        prefs = structured(await call("anki__get_preferences", {}))
        seen["prefs"] = prefs
        bad = await call("anki__set_preferences", {"changes": {"scheduling.rolover": 3}})
        seen["bad"] = bad
        seen["options"] = structured(await call("anki__get_deck_options", {"deck": "Default"}))
        after = structured(await call("anki__set_deck_options", {"deck": "Default", "changes": {"new.perDay": 7}}))
        seen["set_options"] = after
        seen["options_after"] = structured(await call("anki__get_deck_options", {"deck": "Default"}))
        await call("anki__add_note", ADD_161)
        seen["tags"] = structured(await call("anki__list_tags", {}))
        seen["cards"] = structured(await call("anki__find_cards", {"query": '"front:What is the largest planet?"'}))

    _, r = await run_trial(tmp_path, script, mode="mcp")
    prefs = seen["prefs"]
    assert len(prefs) >= 20 and {"scheduling.rollover", "scheduling.learn_ahead_secs", "editing.default_search_text",
                                 "backups.minimum_interval_mins", "reviewing.show_intervals_on_buttons"} <= set(prefs)
    assert seen["bad"].is_error and "scheduling.rollover" in seen["bad"].texts[0]  # names what is known
    assert seen["options"]["new"]["perDay"] != 7 and seen["options_after"]["new"]["perDay"] == 7
    assert "Default" in seen["set_options"]["decks"]
    assert isinstance(seen["tags"], list)
    assert len(seen["cards"]) == 1 and seen["cards"][0]["deck"] == "Default" and not seen["cards"][0]["suspended"]
    # the right note was added, but the deck option changed on the way: collateral
    assert r.kscr == 1.0 and not r.success and r.failure == Failure.COLLATERAL
    assert "deck_options" in r.failure_detail or "deck_options" in r.verdict.reason


async def test_preference_outside_the_task_is_collateral(tmp_path):
    async def script(ctx, trial):
        await ctx.tools.call("anki__add_note", ADD_161)
        await ctx.tools.call("anki__set_preferences", {"changes": {"reviewing.show_intervals_on_buttons": False}})

    _, r = await run_trial(tmp_path, script, mode="mcp")
    assert r.kscr == 1.0 and not r.success and r.failure == Failure.COLLATERAL


async def test_deck_note_tag_card_and_note_type_tools_change_what_they_name(tmp_path):
    """The Anki tools no task calls, against the real Anki: each change is read back through another tool,
    which asks the collection (a tool that answered without changing anything would fail here)."""
    seen = {}
    query = '"front:What is the largest planet?"'

    async def script(ctx, trial):
        def call(name, args=None):
            return ctx.tools.call(f"anki__{name}", args or {})

        seen["decks"] = structured(await call("list_decks"))
        structured(await call("create_deck", {"name": "Scratch"}))
        seen["renamed"] = structured(await call("rename_deck", {"name": "Scratch", "new_name": "Planets"}))
        seen["decks_after"] = structured(await call("list_decks"))
        await call("add_note", ADD_161)
        seen["notes"] = structured(await call("find_notes", {"query": query}))
        seen["tagged"] = structured(await call("add_tags", {"query": query, "tags": ["astro", "keep"]}))
        seen["tag_renamed"] = structured(await call("rename_tag", {"tag": "astro", "new_name": "space"}))
        seen["untagged"] = structured(await call("remove_tags", {"query": query, "tags": ["keep"]}))
        seen["tags_after"] = structured(await call("find_notes", {"query": query}))[0]["tags"]
        structured(await call("suspend_cards", {"query": query}))
        seen["suspended"] = structured(await call("find_cards", {"query": query}))[0]["suspended"]
        seen["unsuspended"] = structured(await call("unsuspend_cards", {"query": query}))
        seen["suspended_after"] = structured(await call("find_cards", {"query": query}))[0]["suspended"]
        structured(await call("set_due_date", {"query": query, "days": "5!"}))  # a review card now
        seen["card_before"] = structured(await call("find_cards", {"query": query}))[0]
        seen["forgot"] = structured(await call("forget_cards", {"query": query, "reset_counts": True}))
        seen["card_after"] = structured(await call("find_cards", {"query": query}))[0]
        seen["types"] = structured(await call("list_note_types"))
        seen["basic"] = structured(await call("get_note_type", {"name": "Basic"}))
        structured(await call("create_note_type", {"name": "Vocab", "fields": ["Word", "Meaning", "Extra"]}))
        seen["field_renamed"] = structured(await call("rename_field", {"note_type": "Vocab", "field": "Meaning",
                                                                      "new_name": "Sense"}))
        seen["field_removed"] = structured(await call("remove_field", {"note_type": "Vocab", "field": "Extra"}))
        seen["template_added"] = structured(await call("add_card_template", {
            "note_type": "Vocab", "name": "Reverse", "front": "{{Sense}}", "back": "{{FrontSide}}<hr>{{Word}}"}))
        seen["vocab"] = structured(await call("get_note_type", {"name": "Vocab"}))
        seen["unknown_field"] = await call("remove_field", {"note_type": "Vocab", "field": "Nope"})

    _, r = await run_trial(tmp_path, script, mode="mcp")
    names = {d["name"] for d in seen["decks"]}
    assert "Default" in names and "Planets" not in names
    assert seen["renamed"]["name"] == "Planets"
    after = {d["name"]: d for d in seen["decks_after"]}
    assert "Planets" in after and "Scratch" not in after and after["Planets"]["id"] == seen["renamed"]["id"]
    [note] = seen["notes"]
    assert note["note_type"] == "Basic" and note["fields"] == ADD_161["fields"] and note["deck"] == "Default"
    assert note["tags"] == [] and len(note["card_ids"]) == 1
    assert seen["tagged"]["notes"] == 1 and seen["tag_renamed"]["notes"] == 1 and seen["untagged"]["notes"] == 1
    assert seen["tags_after"] == ["space"]
    assert seen["suspended"] is True and seen["unsuspended"]["cards"] == 1 and seen["suspended_after"] is False
    card = seen["card_after"]
    assert seen["card_before"]["type"] == 2 and seen["card_before"]["interval"] == 5  # review, 5 days
    assert seen["forgot"]["cards"] == 1 and (card["type"], card["interval"], card["lapses"]) == (0, 0, 0)
    basic = next(t for t in seen["types"] if t["name"] == "Basic")
    assert basic["fields"] == ["Front", "Back"] and not basic["is_cloze"]
    assert seen["basic"]["fields"] == ["Front", "Back"] and "{{Front}}" in seen["basic"]["templates"][0]["front"]
    assert seen["field_renamed"]["fields"] == ["Word", "Sense", "Extra"]
    assert seen["field_removed"]["fields"] == ["Word", "Sense"]
    assert seen["template_added"]["templates"][-1] == "Reverse"
    vocab = seen["vocab"]
    assert vocab["fields"] == ["Word", "Sense"]
    assert {"name": "Reverse", "front": "{{Sense}}", "back": "{{FrontSide}}<hr>{{Word}}"} in vocab["templates"]
    assert seen["unknown_field"].is_error and "Nope" in seen["unknown_field"].texts[0]
    # the asked note was added, with a deck, tags and a note type the task did not ask for: collateral
    assert r.kscr == 1.0 and not r.success and r.failure == Failure.COLLATERAL
