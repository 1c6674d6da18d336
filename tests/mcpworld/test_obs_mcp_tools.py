"""The OBS MCP server as a general tool, in real trials of obs/79 ("switch to scene Outro"): reading tools
leave the verdict alone, and what the newer tools change (a scene item added or moved, studio mode, a
source's audio) is seen by the start-to-end state diff as collateral."""

from mcpworld.config.load import load_tasks
from mcpworld.results import Failure
from tests.mcpworld.test_trial import run_trial, structured

T79 = load_tasks(app="obs")["obs/79"]


async def test_reading_tools_are_not_collateral(tmp_path):
    seen = {}

    async def script(ctx, trial):
        call = ctx.tools.call
        await call("obs__set_current_scene", {"name": "Outro"})
        seen["stats"] = structured(await call("obs__get_stats", {}))
        seen["items"] = structured(await call("obs__list_scene_items", {"scene": "Main"}))
        seen["stream"] = structured(await call("obs__get_streaming_status", {}))
        seen["refused"] = await call("obs__rename_input", {"name": "No such source", "new_name": "Other"})
        video = structured(await call("obs__get_video_settings", {}))
        # the same video settings again: a call that changes nothing is no collateral
        await call("obs__set_video_settings", {"base_width": video["baseWidth"], "base_height": video["baseHeight"]})

    _, r = await run_trial(tmp_path, script, mode="mcp", task=T79)
    assert r.success, r.failure_detail or r.verdict.reason
    assert "obsVersion" in seen["stats"] and "activeFps" in seen["stats"]
    assert {i["source"] for i in seen["items"]} >= {"Title"} and "positionX" in seen["items"][0]["transform"]
    assert seen["stream"]["streaming"] is False
    # what OBS refused reaches the agent with OBS's own reason (its status code 600: resource not found)
    assert seen["refused"].is_error and "OBS refused SetInputName" in seen["refused"].texts[0], seen["refused"].texts
    assert "600" in seen["refused"].texts[0] and "No such source" in seen["refused"].texts[0], seen["refused"].texts


async def test_changes_by_the_newer_tools_are_collateral(tmp_path):
    async def script(ctx, trial):
        call = ctx.tools.call
        await call("obs__set_current_scene", {"name": "Outro"})
        structured(await call("obs__add_scene_item", {"scene": "Break", "source": "Title"}))
        structured(await call("obs__set_scene_item_locked", {"scene": "Main", "source": "Title", "locked": True}))
        structured(await call("obs__create_input", {"scene": "Main", "name": "Clip", "kind": "ffmpeg_source"}))
        audio = structured(await call("obs__set_input_audio", {"name": "Clip", "muted": True, "volume_db": -6.0}))
        assert audio["muted"] is True and round(audio["volume_db"]) == -6

    _, r = await run_trial(tmp_path, script, mode="mcp", task=T79)
    assert r.kscr == 1.0 and not r.success and r.failure == Failure.COLLATERAL
    damage = " ".join(r.verdict.collateral)
    # each record by what OBS keeps unique: an input by name, a scene item by its id within its scene
    for path in ("scenes[name=Break].items[id=", "locked: false -> true", "inputs[name=Clip] added",
                 "scenes[name=Main].items[id="):
        assert path in damage, (path, r.verdict.collateral)
