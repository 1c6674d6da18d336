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
