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


async def test_the_tools_no_task_calls_do_what_they_say(tmp_path):
    """Inputs, filters, transitions, profiles, scene collections, studio mode, outputs and hotkeys, each change
    read back through another tool; what OBS cannot do here (a stream without a server, a replay buffer the
    profile does not enable, a virtual camera without v4l2loopback) is an error that says so, never a
    success."""
    seen = {}

    async def script(ctx, trial):
        async def call(name, args=None):
            return await ctx.tools.call(f"obs__{name}", args or {})

        seen["inputs"] = structured(await call("list_inputs", {"kind": "color_source_v3"}))
        seen["kinds"] = structured(await call("list_input_kinds"))
        seen["defaults"] = structured(await call("get_input_default_settings", {"kind": "color_source_v3"}))
        structured(await call("set_input_settings", {"name": "Yellow Card", "settings": {"width": 640}}))
        seen["input"] = structured(await call("get_input_settings", {"name": "Yellow Card"}))
        seen["no_audio"] = await call("get_input_audio", {"name": "Yellow Card"})
        structured(await call("add_filter", {"source": "Yellow Card", "name": "Tint", "kind": "color_filter"}))
        structured(await call("add_filter", {"source": "Yellow Card", "name": "Crop", "kind": "crop_filter"}))
        structured(await call("set_filter_settings", {"source": "Yellow Card", "name": "Tint", "settings": {"opacity": 0.5}}))
        structured(await call("rename_filter", {"source": "Yellow Card", "name": "Tint", "new_name": "Shade"}))
        structured(await call("set_filter_index", {"source": "Yellow Card", "name": "Crop", "index": 0}))
        seen["filters"] = structured(await call("list_filters", {"source": "Yellow Card"}))
        seen["transitions"] = structured(await call("list_transitions"))
        seen["cut_settings"] = await call("set_transition_settings", {"settings": {}})
        seen["directory"] = structured(await call("get_recording_directory"))
        seen["file_path"] = structured(await call("get_profile_parameter", {"category": "SimpleOutput", "name": "FilePath"}))
        seen["service"] = structured(await call("get_stream_service"))
        structured(await call("create_profile", {"name": "Spare"}))
        seen["profiles"] = structured(await call("list_profiles"))
        structured(await call("set_current_profile", {"name": "Task"}))
        structured(await call("remove_profile", {"name": "Spare"}))
        seen["profiles_after"] = structured(await call("list_profiles"))
        seen["collections"] = structured(await call("list_scene_collections"))
        seen["collection"] = structured(await call("set_current_scene_collection", {"name": "Task"}))
        seen["studio"] = structured(await call("set_studio_mode", {"enabled": True}))
        seen["preview"] = structured(await call("set_preview_scene", {"name": "Outro"}))
        seen["program"] = structured(await call("transition_to_program"))
        seen["scenes"] = structured(await call("list_scenes"))
        structured(await call("set_studio_mode", {"enabled": False}))
        seen["duplicated"] = structured(await call("duplicate_scene_item", {"scene": "Main", "source": "Title",
                                                                             "to_scene": "Break"}))
        seen["break"] = structured(await call("list_scene_items", {"scene": "Break"}))
        seen["hotkeys"] = structured(await call("list_hotkeys"))
        seen["hotkey"] = structured(await call("trigger_hotkey_by_keys", {"key": "OBS_KEY_F13"}))
        seen["stream"] = await call("start_streaming")
        seen["streaming"] = structured(await call("get_streaming_status"))
        seen["stop_stream"] = await call("stop_streaming")
        seen["replay"] = [await call(n) for n in ("start_replay_buffer", "save_replay_buffer", "stop_replay_buffer")]
        seen["camera"] = await call("set_virtual_camera", {"active": True})
        structured(await call("start_recording"))
        seen["pause"] = await call("pause_recording", {"paused": True})
        seen["recording"] = structured(await call("get_recording_status"))
        structured(await call("stop_recording"))

    await run_trial(tmp_path, script, mode="mcp", task=T79)
    assert {i["name"] for i in seen["inputs"]} == {"Yellow Card", "Blue Card", "Red Card", "Background"}
    assert "color_source_v3" in seen["kinds"] and seen["defaults"]["width"] == 1920
    assert seen["input"]["settings"]["width"] == 640 and seen["input"]["settings"]["height"] == 180
    assert seen["no_audio"].is_error and "audio" in seen["no_audio"].texts[0]
    assert [(f["name"], f["kind"]) for f in seen["filters"]] == [("Crop", "crop_filter"), ("Shade", "color_filter")]
    assert seen["filters"][1]["settings"] == {"opacity": 0.5}
    assert seen["transitions"]["current"] == "Cut" and seen["cut_settings"].is_error  # Cut has no settings
    assert seen["directory"]["directory"] == seen["file_path"]["value"] and seen["directory"]["directory"].endswith("/Videos")
    assert seen["service"]["settings"]["server"].startswith("rtmp://")
    assert seen["profiles"] == {"profiles": ["Spare", "Task"], "current": "Spare"}
    assert seen["profiles_after"] == {"profiles": ["Task"], "current": "Task"}
    assert seen["collections"] == {"scene_collections": ["Task"], "current": "Task"} and seen["collection"]["current"] == "Task"
    # each studio-mode tool returns once OBS shows its change (they once answered before it had)
    assert seen["studio"] == {"studio_mode": True} and seen["preview"] == {"preview_scene": "Outro"}
    assert seen["program"] == {"program_scene": "Outro"} and seen["scenes"]["current_program_scene"] == "Outro"
    assert seen["duplicated"]["scene"] == "Break" and "Title" in [i["source"] for i in seen["break"]]
    assert "OBSBasic.StartRecording" in seen["hotkeys"] and seen["hotkey"] == {"pressed": "OBS_KEY_F13"}
    assert seen["stream"].is_error and "rtmp://" in seen["stream"].texts[0] and seen["streaming"]["streaming"] is False
    assert seen["stop_stream"].is_error
    assert all(r.is_error and "Replay buffer is not available" in r.texts[0] for r in seen["replay"])
    assert seen["camera"].is_error and "VirtualCam is not available" in seen["camera"].texts[0]
    # a pause OBS accepts without pausing is an error, not {"paused": false}
    paused = seen["recording"]["paused"]
    assert (not seen["pause"].is_error and paused) or (seen["pause"].is_error and not paused), (seen["pause"].texts, paused)
