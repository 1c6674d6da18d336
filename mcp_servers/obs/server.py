"""OBS Studio MCP server over obs-websocket v5 (the `obsws-python` client), for the running OBS.

OBS_WS_URL (ws://host:port) and OBS_WS_PASSWORD say where; every tool is one or a few
obs-websocket requests, so what it does is what OBS does for any websocket client: the GUI shows
it and libobs runs the same functions as for a click (which is what the task hooks observe).
Scene items are listed bottom to top (index 0 is drawn first, at the bottom of the Sources dock).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from typing import Any
from urllib.parse import urlparse

import obsws_python as obsws
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

logging.getLogger("obsws_python").setLevel(logging.CRITICAL)

mcp = MCPServer("obs", instructions="Tools for the running OBS Studio: scenes, sources (inputs) and their settings, "
                                    "scene items, filters, transitions, recording, streaming service, profiles, "
                                    "scene collections, profile parameters, hotkeys and screenshots.")

_client: obsws.ReqClient | None = None
_lock = threading.Lock()


def _connect() -> obsws.ReqClient:
    url = urlparse(os.environ.get("OBS_WS_URL", "ws://127.0.0.1:4455"))
    return obsws.ReqClient(host=url.hostname, port=url.port, password=os.environ.get("OBS_WS_PASSWORD", ""), timeout=15)


def _req(request: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
    """One obs-websocket request; reconnects once if OBS dropped the connection."""
    global _client
    with _lock:
        for attempt in (0, 1):
            try:
                if _client is None:
                    _client = _connect()
                return _client.send(request, data, raw=True) or {}
            except obsws.error.OBSSDKRequestError as e:
                raise ToolError(f"OBS refused {request}: {e.comment or 'code ' + str(e.code)}") from None
            except (OSError, obsws.error.OBSSDKError, Exception) as e:  # websocket-client raises its own types
                _client = None
                if attempt:
                    raise ToolError(f"OBS is not reachable over obs-websocket ({type(e).__name__}: {e}); "
                                    "is it running?") from None
    raise AssertionError("unreachable")


def _out(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def tool(fn):
    return mcp.tool(structured_output=False)(fn)


def _item_id(scene: str, source: str) -> int:
    return _req("GetSceneItemId", {"sceneName": scene, "sourceName": source})["sceneItemId"]


# -- scenes -----------------------------------------------------------------------------------
@tool
def list_scenes() -> str:
    """List the scenes in Scenes-dock order (top first), with the current program scene."""
    r = _req("GetSceneList")
    return _out({"scenes": [s["sceneName"] for s in reversed(r["scenes"])],
                 "current_program_scene": r["currentProgramSceneName"]})


@tool
def create_scene(name: str) -> str:
    """Create an empty scene."""
    _req("CreateScene", {"sceneName": name})
    return _out({"created": name})


@tool
def remove_scene(name: str) -> str:
    """Delete a scene."""
    _req("RemoveScene", {"sceneName": name})
    return _out({"removed": name})


@tool
def rename_scene(name: str, new_name: str) -> str:
    """Rename a scene."""
    _req("SetSceneName", {"sceneName": name, "newSceneName": new_name})
    return _out({"renamed": name, "to": new_name})


@tool
def set_current_scene(name: str) -> str:
    """Switch the program output to a scene, using the current transition."""
    _req("SetCurrentProgramScene", {"sceneName": name})
    return _out({"program_scene": name})


# -- scene items ----------------------------------------------------------------------------
@tool
def list_scene_items(scene: str) -> str:
    """List a scene's items bottom to top: source name, kind, visible, locked, index."""
    items = _req("GetSceneItemList", {"sceneName": scene})["sceneItems"]
    return _out([{"source": i["sourceName"], "kind": i.get("inputKind"), "visible": i["sceneItemEnabled"],
                  "locked": i["sceneItemLocked"], "index": i["sceneItemIndex"]} for i in items])


@tool
def set_scene_item_visible(scene: str, source: str, visible: bool) -> str:
    """Show or hide a source in a scene (the eye icon)."""
    _req("SetSceneItemEnabled", {"sceneName": scene, "sceneItemId": _item_id(scene, source),
                                 "sceneItemEnabled": visible})
    return _out({"scene": scene, "source": source, "visible": visible})


@tool
def set_scene_item_index(scene: str, source: str, index: int) -> str:
    """Move a source to a position in its scene: 0 is the bottom."""
    _req("SetSceneItemIndex", {"sceneName": scene, "sceneItemId": _item_id(scene, source), "sceneItemIndex": index})
    return list_scene_items(scene)


@tool
def remove_scene_item(scene: str, source: str) -> str:
    """Remove a source from one scene (the source itself stays if other scenes use it)."""
    _req("RemoveSceneItem", {"sceneName": scene, "sceneItemId": _item_id(scene, source)})
    return _out({"scene": scene, "removed": source})


@tool
def set_scene_item_transform(scene: str, source: str, transform: dict[str, Any]) -> str:
    """Set position/scale/rotation/crop of a source in a scene, e.g. {"positionX": 10, "scaleX": 0.5}."""
    _req("SetSceneItemTransform", {"sceneName": scene, "sceneItemId": _item_id(scene, source),
                                   "sceneItemTransform": transform})
    return _out({"scene": scene, "source": source, "transform": transform})


# -- inputs (sources) ---------------------------------------------------------------------------
@tool
def list_input_kinds() -> str:
    """The source kinds this OBS can create (e.g. color_source_v3, text_ft2_source_v2, image_source)."""
    return _out(_req("GetInputKindList", {"unversioned": False})["inputKinds"])


@tool
def list_inputs(kind: str | None = None) -> str:
    """List all sources (inputs), optionally of one kind."""
    data = {"inputKind": kind} if kind else {}
    return _out([{"name": i["inputName"], "kind": i["inputKind"]} for i in _req("GetInputList", data)["inputs"]])


@tool
def create_input(scene: str, name: str, kind: str, settings: dict[str, Any] | None = None,
                 visible: bool = True) -> str:
    """Create a source of a kind and add it to a scene, with optional settings."""
    data = {"sceneName": scene, "inputName": name, "inputKind": kind, "sceneItemEnabled": visible}
    if settings:
        data["inputSettings"] = settings
    r = _req("CreateInput", data)
    return _out({"created": name, "kind": kind, "scene": scene, "scene_item_id": r.get("sceneItemId")})


@tool
def remove_input(name: str) -> str:
    """Delete a source everywhere it is used."""
    # obs-websocket 5.1's RemoveInput only flags the source: scenes that are not on screen keep
    # showing it until they next render. Removing its scene items first, as the GUI does, is immediate.
    scenes = [s["sceneName"] for s in _req("GetSceneList")["scenes"]]
    for scene in scenes:
        for item in _req("GetSceneItemList", {"sceneName": scene})["sceneItems"]:
            if item["sourceName"] == name:
                _req("RemoveSceneItem", {"sceneName": scene, "sceneItemId": item["sceneItemId"]})
    if any(i["inputName"] == name for i in _req("GetInputList")["inputs"]):
        _req("RemoveInput", {"inputName": name})
    return _out({"removed": name})


@tool
def rename_input(name: str, new_name: str) -> str:
    """Rename a source."""
    _req("SetInputName", {"inputName": name, "newInputName": new_name})
    return _out({"renamed": name, "to": new_name})


@tool
def get_input_settings(name: str) -> str:
    """A source's kind and its settings (only those differing from the defaults)."""
    r = _req("GetInputSettings", {"inputName": name})
    return _out({"name": name, "kind": r["inputKind"], "settings": r["inputSettings"]})


@tool
def get_input_default_settings(kind: str) -> str:
    """The default settings of a source kind: shows which setting keys it has."""
    return _out(_req("GetInputDefaultSettings", {"inputKind": kind})["defaultInputSettings"])


@tool
def set_input_settings(name: str, settings: dict[str, Any], overlay: bool = True) -> str:
    """Change a source's settings; overlay=False resets every setting not given to its default."""
    _req("SetInputSettings", {"inputName": name, "inputSettings": settings, "overlay": overlay})
    return get_input_settings(name)


# -- filters ----------------------------------------------------------------------------------
@tool
def list_filters(source: str) -> str:
    """A source's filters in order: name, kind, enabled, settings."""
    filters = _req("GetSourceFilterList", {"sourceName": source})["filters"]
    return _out([{"name": f["filterName"], "kind": f["filterKind"], "enabled": f["filterEnabled"],
                  "settings": f["filterSettings"]} for f in filters])


@tool
def add_filter(source: str, name: str, kind: str, settings: dict[str, Any] | None = None) -> str:
    """Add a filter to a source, e.g. kind color_filter_v2, chroma_key_filter_v2, scroll_filter, mask_filter_v2."""
    data = {"sourceName": source, "filterName": name, "filterKind": kind}
    if settings:
        data["filterSettings"] = settings
    _req("CreateSourceFilter", data)
    return _out({"source": source, "added": name, "kind": kind})


@tool
def set_filter_enabled(source: str, name: str, enabled: bool) -> str:
    """Enable or disable a filter."""
    _req("SetSourceFilterEnabled", {"sourceName": source, "filterName": name, "filterEnabled": enabled})
    return _out({"source": source, "filter": name, "enabled": enabled})


@tool
def set_filter_settings(source: str, name: str, settings: dict[str, Any]) -> str:
    """Change a filter's settings."""
    _req("SetSourceFilterSettings", {"sourceName": source, "filterName": name, "filterSettings": settings})
    return _out({"source": source, "filter": name, "settings": settings})


@tool
def remove_filter(source: str, name: str) -> str:
    """Remove a filter from a source."""
    _req("RemoveSourceFilter", {"sourceName": source, "filterName": name})
    return _out({"source": source, "removed": name})


# -- transitions ------------------------------------------------------------------------------
@tool
def list_transitions() -> str:
    """The transitions, the current one and its duration in ms."""
    r = _req("GetSceneTransitionList")
    cur = _req("GetCurrentSceneTransition")
    return _out({"transitions": [{"name": t["transitionName"], "kind": t["transitionKind"]} for t in r["transitions"]],
                 "current": r["currentSceneTransitionName"], "duration_ms": cur.get("transitionDuration"),
                 "settings": cur.get("transitionSettings")})


@tool
def set_current_transition(name: str) -> str:
    """Make a transition (e.g. Cut, Fade) the one used for scene switches."""
    _req("SetCurrentSceneTransition", {"transitionName": name})
    return _out({"current_transition": name})


@tool
def set_transition_duration(duration_ms: int) -> str:
    """Set the current transition's duration in milliseconds."""
    _req("SetCurrentSceneTransitionDuration", {"transitionDuration": duration_ms})
    return _out({"duration_ms": duration_ms})


@tool
def set_transition_settings(settings: dict[str, Any], overlay: bool = True) -> str:
    """Change the current transition's settings."""
    _req("SetCurrentSceneTransitionSettings", {"transitionSettings": settings, "overlay": overlay})
    return _out({"settings": settings})


# -- recording, replay buffer, streaming ------------------------------------------------------
@tool
def start_recording() -> str:
    """Start recording to the profile's recording path and format; returns once it records."""
    _req("StartRecord")
    deadline = time.monotonic() + 20
    while not _req("GetRecordStatus")["outputActive"] and time.monotonic() < deadline:
        time.sleep(0.1)
    return _out({"recording": _req("GetRecordStatus")["outputActive"]})


@tool
def stop_recording() -> str:
    """Stop recording; returns once the file is finished, with its path."""
    r = _req("StopRecord")
    deadline = time.monotonic() + 20
    while _req("GetRecordStatus")["outputActive"] and time.monotonic() < deadline:
        time.sleep(0.1)
    return _out({"recording": _req("GetRecordStatus")["outputActive"], "path": r.get("outputPath")})


@tool
def get_recording_status() -> str:
    """Whether OBS is recording, and for how long."""
    r = _req("GetRecordStatus")
    return _out({"recording": r["outputActive"], "paused": r.get("outputPaused"), "timecode": r.get("outputTimecode")})


@tool
def get_recording_directory() -> str:
    """The folder recordings are written to."""
    return _out(_req("GetRecordDirectory")["recordDirectory"])


def _output_mode() -> str:
    mode = _req("GetProfileParameter", {"parameterCategory": "Output", "parameterName": "Mode"}).get("parameterValue")
    return "AdvOut" if mode == "Advanced" else "SimpleOutput"


def _app_path(path: str) -> str:
    """~ is the home of the user OBS runs as (OBS_HOME), which is not this server's inside a container."""
    home = os.environ.get("OBS_HOME")
    if home and (path == "~" or path.startswith("~/")):
        return home + path[1:]
    return os.path.expanduser(path)


@tool
def set_recording_directory(path: str) -> str:
    """Set the folder recordings are written to (the current profile, Simple or Advanced output mode)."""
    section = _output_mode()
    key = "RecFilePath" if section == "AdvOut" else "FilePath"
    folder = _app_path(path)
    _req("SetProfileParameter", {"parameterCategory": section, "parameterName": key, "parameterValue": folder})
    return _out({"record_directory": folder})


@tool
def set_recording_format(file_format: str) -> str:
    """Set the recording container: mkv, mp4, mov, flv, ts or m3u8."""
    section = _output_mode()
    _req("SetProfileParameter", {"parameterCategory": section, "parameterName": "RecFormat",
                                 "parameterValue": file_format})
    return _out({"format": file_format})


@tool
def start_replay_buffer() -> str:
    """Start the replay buffer (it must be enabled in the profile)."""
    _req("StartReplayBuffer")
    return _out({"replay_buffer": True})


@tool
def stop_replay_buffer() -> str:
    """Stop the replay buffer."""
    _req("StopReplayBuffer")
    return _out({"replay_buffer": False})


@tool
def get_stream_service() -> str:
    """The streaming service: kind (rtmp_common or rtmp_custom) and settings."""
    r = _req("GetStreamServiceSettings")
    return _out({"kind": r["streamServiceType"], "settings": r["streamServiceSettings"]})


@tool
def set_stream_service(kind: str, settings: dict[str, Any]) -> str:
    """Set the streaming service, e.g. kind rtmp_common with {"service": "YouTube - RTMPS", "server": "auto", "key": ""},
    or rtmp_custom with {"server": "rtmp://...", "key": ""}."""
    _req("SetStreamServiceSettings", {"streamServiceType": kind, "streamServiceSettings": settings})
    return get_stream_service()


# -- profiles, parameters, scene collections --------------------------------------------------
@tool
def list_profiles() -> str:
    """The profiles and the current one."""
    r = _req("GetProfileList")
    return _out({"profiles": r["profiles"], "current": r["currentProfileName"]})


@tool
def create_profile(name: str) -> str:
    """Create a profile and switch to it."""
    _req("CreateProfile", {"profileName": name})
    return _out({"created": name})


@tool
def set_current_profile(name: str) -> str:
    """Switch to another profile."""
    _req("SetCurrentProfile", {"profileName": name})
    return _out({"current": name})


@tool
def get_profile_parameter(category: str, name: str) -> str:
    """A value of the current profile's basic.ini, e.g. category SimpleOutput, name FilePath / RecFormat /
    VBitrate / ABitrate / Preset / RecRB / RecRBTime; category Output, name Mode (Simple or Advanced)."""
    r = _req("GetProfileParameter", {"parameterCategory": category, "parameterName": name})
    return _out({"category": category, "name": name, "value": r.get("parameterValue"),
                 "default": r.get("defaultParameterValue")})


@tool
def set_profile_parameter(category: str, name: str, value: str) -> str:
    """Set a value of the current profile's basic.ini (booleans are "true"/"false"). Settings such as
    SimpleOutput FilePath (the recording folder) and RecFormat (mkv, mp4, mov, flv, ts, m3u8) take effect
    for the next recording."""
    _req("SetProfileParameter", {"parameterCategory": category, "parameterName": name, "parameterValue": value})
    return _out({"category": category, "name": name, "value": value})


@tool
def list_scene_collections() -> str:
    """The scene collections and the current one."""
    r = _req("GetSceneCollectionList")
    return _out({"scene_collections": r["sceneCollections"], "current": r["currentSceneCollectionName"]})


@tool
def create_scene_collection(name: str) -> str:
    """Create a scene collection and switch to it."""
    _req("CreateSceneCollection", {"sceneCollectionName": name})
    return _out({"created": name})


@tool
def set_current_scene_collection(name: str) -> str:
    """Switch to another scene collection."""
    _req("SetCurrentSceneCollection", {"sceneCollectionName": name})
    return _out({"current": name})


@tool
def get_video_settings() -> str:
    """Base (canvas) and output resolution and the frame rate."""
    return _out(_req("GetVideoSettings"))


# -- hotkeys and screenshots ------------------------------------------------------------------
@tool
def list_hotkeys() -> str:
    """The names of all hotkeys OBS knows (e.g. OBSBasic.StartRecording)."""
    return _out(_req("GetHotkeyList")["hotkeys"])


@tool
def trigger_hotkey(name: str) -> str:
    """Run a hotkey's action by its name, as if it was pressed."""
    _req("TriggerHotkeyByName", {"hotkeyName": name})
    return _out({"triggered": name})


@tool
def save_source_screenshot(source: str, path: str, image_format: str = "png", width: int | None = None,
                           height: int | None = None) -> str:
    """Save a screenshot of a scene or source to an absolute file path, optionally scaled to width x height."""
    data: dict[str, Any] = {"sourceName": source, "imageFormat": image_format, "imageFilePath": _app_path(path)}
    if width:
        data["imageWidth"] = width
    if height:
        data["imageHeight"] = height
    _req("SaveSourceScreenshot", data)
    return _out({"saved": data["imageFilePath"]})


def main() -> None:
    mcp.run(transport="stdio")
