"""OBS tools: transitions, recording, replay buffer, streaming service, profiles and their parameters,
scene collections, video settings, hotkeys and screenshots."""

from __future__ import annotations

import os
import time
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from mcp_servers.hints import ACT, ADD, READ, REMOVE, SET, START
from mcp_servers.obs.server import _req, tool


# -- transitions ------------------------------------------------------------------------------
@tool(READ)
def list_transitions(ctx: Context) -> dict[str, Any]:
    """The transitions, the current one and its duration in ms."""
    r = _req(ctx, "GetSceneTransitionList")
    cur = _req(ctx, "GetCurrentSceneTransition")
    return ({"transitions": [{"name": t["transitionName"], "kind": t["transitionKind"]} for t in r["transitions"]],
                 "current": r["currentSceneTransitionName"], "duration_ms": cur.get("transitionDuration"),
                 "settings": cur.get("transitionSettings")})


@tool(SET)
def set_current_transition(ctx: Context, name: str) -> dict[str, Any]:
    """Make a transition (e.g. Cut, Fade) the one used for scene switches."""
    _req(ctx, "SetCurrentSceneTransition", {"transitionName": name})
    return ({"current_transition": name})


@tool(SET)
def set_transition_duration(ctx: Context, duration_ms: int) -> dict[str, Any]:
    """Set the current transition's duration in milliseconds."""
    _req(ctx, "SetCurrentSceneTransitionDuration", {"transitionDuration": duration_ms})
    return ({"duration_ms": duration_ms})


@tool(SET)
def set_transition_settings(ctx: Context, settings: dict[str, Any], overlay: bool = True) -> dict[str, Any]:
    """Change the current transition's settings."""
    _req(ctx, "SetCurrentSceneTransitionSettings", {"transitionSettings": settings, "overlay": overlay})
    return ({"settings": settings})


# -- recording, replay buffer, streaming ------------------------------------------------------
@tool(START)
def start_recording(ctx: Context) -> dict[str, Any]:
    """Start recording to the profile's recording path and format; returns once it records."""
    _req(ctx, "StartRecord")
    deadline = time.monotonic() + 20
    while not _req(ctx, "GetRecordStatus")["outputActive"] and time.monotonic() < deadline:
        time.sleep(0.1)
    return ({"recording": _req(ctx, "GetRecordStatus")["outputActive"]})


@tool(SET)
def stop_recording(ctx: Context) -> dict[str, Any]:
    """Stop recording; returns once the file is finished, with its path."""
    r = _req(ctx, "StopRecord")
    deadline = time.monotonic() + 20
    while _req(ctx, "GetRecordStatus")["outputActive"] and time.monotonic() < deadline:
        time.sleep(0.1)
    return ({"recording": _req(ctx, "GetRecordStatus")["outputActive"], "path": r.get("outputPath")})


@tool(READ)
def get_recording_status(ctx: Context) -> dict[str, Any]:
    """Whether OBS is recording, and for how long."""
    r = _req(ctx, "GetRecordStatus")
    return ({"recording": r["outputActive"], "paused": r.get("outputPaused"), "timecode": r.get("outputTimecode")})


@tool(READ)
def get_recording_directory(ctx: Context) -> dict[str, Any]:
    """The folder recordings are written to."""
    return {"directory": _req(ctx, "GetRecordDirectory")["recordDirectory"]}


def _output_mode(ctx) -> str:
    mode = _req(ctx, "GetProfileParameter", {"parameterCategory": "Output", "parameterName": "Mode"}).get("parameterValue")
    return "AdvOut" if mode == "Advanced" else "SimpleOutput"


def _app_path(path: str) -> str:
    """~ is the home of the user OBS runs as (OBS_HOME), which is not this server's inside a container."""
    home = os.environ.get("OBS_HOME")
    if home and (path == "~" or path.startswith("~/")):
        return home + path[1:]
    return os.path.expanduser(path)


@tool(SET)
def set_recording_directory(ctx: Context, path: str) -> dict[str, Any]:
    """Set the folder recordings are written to (the current profile, Simple or Advanced output mode)."""
    section = _output_mode(ctx)
    key = "RecFilePath" if section == "AdvOut" else "FilePath"
    folder = _app_path(path)
    _req(ctx, "SetProfileParameter", {"parameterCategory": section, "parameterName": key, "parameterValue": folder})
    return ({"record_directory": folder})


@tool(SET)
def set_recording_format(ctx: Context, file_format: str) -> dict[str, Any]:
    """Set the recording container: mkv, mp4, mov, flv, ts or m3u8."""
    section = _output_mode(ctx)
    _req(ctx, "SetProfileParameter", {"parameterCategory": section, "parameterName": "RecFormat",
                                 "parameterValue": file_format})
    return ({"format": file_format})


@tool(SET)
def pause_recording(ctx: Context, paused: bool = True) -> dict[str, Any]:
    """Pause (or, with paused=false, resume) the running recording."""
    _req(ctx, "PauseRecord" if paused else "ResumeRecord")
    # OBS may accept the request and not pause (seen here on the task profiles' recordings, cause not known)
    deadline = time.monotonic() + 3
    while _req(ctx, "GetRecordStatus").get("outputPaused") != paused and time.monotonic() < deadline:
        time.sleep(0.1)
    if _req(ctx, "GetRecordStatus").get("outputPaused") != paused:
        raise ToolError(f"OBS accepted the {'pause' if paused else 'resume'} request but the recording is "
                        f"{'not paused' if paused else 'still paused'}")
    return {"paused": _req(ctx, "GetRecordStatus").get("outputPaused")}


@tool(START)
def start_streaming(ctx: Context) -> dict[str, Any]:
    """Start streaming to the profile's streaming service; returns once OBS streams, or an error when it
    could not connect."""
    _req(ctx, "StartStream")
    deadline = time.monotonic() + 15
    while not _req(ctx, "GetStreamStatus")["outputActive"] and time.monotonic() < deadline:
        time.sleep(0.1)
    if not _req(ctx, "GetStreamStatus")["outputActive"]:
        server = (_req(ctx, "GetStreamServiceSettings").get("streamServiceSettings") or {}).get("server")
        raise ToolError(f"OBS did not start streaming: the stream server ({server}) did not take the stream")
    return {"streaming": True}


@tool(SET)
def stop_streaming(ctx: Context) -> dict[str, Any]:
    """Stop streaming; returns once OBS has stopped."""
    _req(ctx, "StopStream")
    deadline = time.monotonic() + 15
    while _req(ctx, "GetStreamStatus")["outputActive"] and time.monotonic() < deadline:
        time.sleep(0.1)
    return {"streaming": _req(ctx, "GetStreamStatus")["outputActive"]}


@tool(READ)
def get_streaming_status(ctx: Context) -> dict[str, Any]:
    """Whether OBS is streaming, for how long, and whether it is reconnecting."""
    r = _req(ctx, "GetStreamStatus")
    return {"streaming": r["outputActive"], "reconnecting": r.get("outputReconnecting"), "timecode": r.get("outputTimecode")}


@tool(ACT)
def save_replay_buffer(ctx: Context) -> dict[str, Any]:
    """Save the replay buffer's content to a file (the buffer must be running)."""
    _req(ctx, "SaveReplayBuffer")
    return {"saved": True}


@tool(SET)
def set_virtual_camera(ctx: Context, active: bool) -> dict[str, Any]:
    """Start or stop the virtual camera."""
    _req(ctx, "StartVirtualCam" if active else "StopVirtualCam")
    return {"virtual_camera": active}


@tool(START)
def start_replay_buffer(ctx: Context) -> dict[str, Any]:
    """Start the replay buffer (it must be enabled in the profile)."""
    _req(ctx, "StartReplayBuffer")
    return ({"replay_buffer": True})


@tool(SET)
def stop_replay_buffer(ctx: Context) -> dict[str, Any]:
    """Stop the replay buffer."""
    _req(ctx, "StopReplayBuffer")
    return ({"replay_buffer": False})


@tool(READ)
def get_stream_service(ctx: Context) -> dict[str, Any]:
    """The streaming service: kind (rtmp_common or rtmp_custom) and settings."""
    r = _req(ctx, "GetStreamServiceSettings")
    return ({"kind": r["streamServiceType"], "settings": r["streamServiceSettings"]})


@tool(SET)
def set_stream_service(ctx: Context, kind: str, settings: dict[str, Any]) -> dict[str, Any]:
    """Set the streaming service, e.g. kind rtmp_common with {"service": "YouTube - RTMPS", "server": "auto", "key": ""},
    or rtmp_custom with {"server": "rtmp://...", "key": ""}."""
    _req(ctx, "SetStreamServiceSettings", {"streamServiceType": kind, "streamServiceSettings": settings})
    return get_stream_service(ctx)


# -- profiles, parameters, scene collections --------------------------------------------------
@tool(READ)
def list_profiles(ctx: Context) -> dict[str, Any]:
    """The profiles and the current one."""
    r = _req(ctx, "GetProfileList")
    return ({"profiles": r["profiles"], "current": r["currentProfileName"]})


@tool(ADD)
def create_profile(ctx: Context, name: str) -> dict[str, Any]:
    """Create a profile and switch to it."""
    _req(ctx, "CreateProfile", {"profileName": name})
    return ({"created": name})


@tool(SET)
def set_current_profile(ctx: Context, name: str) -> dict[str, Any]:
    """Switch to another profile."""
    _req(ctx, "SetCurrentProfile", {"profileName": name})
    return ({"current": name})


@tool(READ)
def get_profile_parameter(ctx: Context, category: str, name: str) -> dict[str, Any]:
    """A value of the current profile's basic.ini, e.g. category SimpleOutput, name FilePath / RecFormat /
    VBitrate / ABitrate / Preset / RecRB / RecRBTime; category Output, name Mode (Simple or Advanced)."""
    r = _req(ctx, "GetProfileParameter", {"parameterCategory": category, "parameterName": name})
    return ({"category": category, "name": name, "value": r.get("parameterValue"),
                 "default": r.get("defaultParameterValue")})


@tool(SET)
def set_profile_parameter(ctx: Context, category: str, name: str, value: str) -> dict[str, Any]:
    """Set a value of the current profile's basic.ini (booleans are "true"/"false"). Settings such as
    SimpleOutput FilePath (the recording folder) and RecFormat (mkv, mp4, mov, flv, ts, m3u8) take effect
    for the next recording."""
    _req(ctx, "SetProfileParameter", {"parameterCategory": category, "parameterName": name, "parameterValue": value})
    return ({"category": category, "name": name, "value": value})


@tool(READ)
def list_scene_collections(ctx: Context) -> dict[str, Any]:
    """The scene collections and the current one."""
    r = _req(ctx, "GetSceneCollectionList")
    return ({"scene_collections": r["sceneCollections"], "current": r["currentSceneCollectionName"]})


@tool(ADD)
def create_scene_collection(ctx: Context, name: str) -> dict[str, Any]:
    """Create a scene collection and switch to it."""
    _req(ctx, "CreateSceneCollection", {"sceneCollectionName": name})
    return ({"created": name})


@tool(SET)
def set_current_scene_collection(ctx: Context, name: str) -> dict[str, Any]:
    """Switch to another scene collection."""
    _req(ctx, "SetCurrentSceneCollection", {"sceneCollectionName": name})
    return ({"current": name})


@tool(READ)
def get_video_settings(ctx: Context) -> dict[str, Any]:
    """Base (canvas) and output resolution and the frame rate."""
    return (_req(ctx, "GetVideoSettings"))


@tool(SET)
def set_video_settings(ctx: Context, base_width: int | None = None, base_height: int | None = None,
                       output_width: int | None = None, output_height: int | None = None,
                       fps_numerator: int | None = None, fps_denominator: int | None = None) -> dict[str, Any]:
    """Change the base (canvas) and/or output (scaled) resolution and/or the frame rate (numerator/denominator,
    e.g. 30/1); give each pair whole. Not while recording or streaming."""
    names = {"baseWidth": base_width, "baseHeight": base_height, "outputWidth": output_width,
             "outputHeight": output_height, "fpsNumerator": fps_numerator, "fpsDenominator": fps_denominator}
    _req(ctx, "SetVideoSettings", {k: v for k, v in names.items() if v is not None})
    return _req(ctx, "GetVideoSettings")


@tool(REMOVE)
def remove_profile(ctx: Context, name: str) -> dict[str, Any]:
    """Delete a profile (not the current one)."""
    _req(ctx, "RemoveProfile", {"profileName": name})
    return {"removed": name}


@tool(READ)
def get_stats(ctx: Context) -> dict[str, Any]:
    """OBS's version and its running statistics: CPU, memory, frame rate, rendered and skipped frames."""
    return {**_req(ctx, "GetVersion"), **_req(ctx, "GetStats")}


# -- hotkeys and screenshots ------------------------------------------------------------------
@tool(READ)
def list_hotkeys(ctx: Context) -> list[str]:
    """The names of all hotkeys OBS knows (e.g. OBSBasic.StartRecording)."""
    return (_req(ctx, "GetHotkeyList")["hotkeys"])


@tool(ACT)
def trigger_hotkey(ctx: Context, name: str) -> dict[str, Any]:
    """Run a hotkey's action by its name, as if it was pressed."""
    _req(ctx, "TriggerHotkeyByName", {"hotkeyName": name})
    return ({"triggered": name})


@tool(ACT)
def trigger_hotkey_by_keys(ctx: Context, key: str, shift: bool = False, control: bool = False, alt: bool = False,
                           command: bool = False) -> dict[str, Any]:
    """Press a key combination inside OBS, as its hotkeys see it (key: an OBS key id, e.g. OBS_KEY_F5)."""
    _req(ctx, "TriggerHotkeyByKeySequence", {"keyId": key, "keyModifiers": {"shift": shift, "control": control,
                                                                            "alt": alt, "command": command}})
    return {"pressed": key}


@tool(SET)
def save_source_screenshot(ctx: Context, source: str, path: str, image_format: str = "png", width: int | None = None,
                           height: int | None = None) -> dict[str, Any]:
    """Save a screenshot of a scene or source to an absolute file path, optionally scaled to width x height."""
    data: dict[str, Any] = {"sourceName": source, "imageFormat": image_format, "imageFilePath": _app_path(path)}
    if width:
        data["imageWidth"] = width
    if height:
        data["imageHeight"] = height
    _req(ctx, "SaveSourceScreenshot", data)
    return ({"saved": data["imageFilePath"]})
