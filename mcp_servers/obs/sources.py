"""OBS tools: inputs (sources), their settings and their filters."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from mcp_servers.hints import ADD, READ, REMOVE, SET
from mcp_servers.obs.server import NOT_FOUND, Refused, _req, tool


# -- inputs (sources) ---------------------------------------------------------------------------
@tool(READ)
def list_input_kinds(ctx: Context) -> list[str]:
    """The source kinds this OBS can create (e.g. color_source_v3, text_ft2_source_v2, image_source)."""
    return (_req(ctx, "GetInputKindList", {"unversioned": False})["inputKinds"])


@tool(READ)
def list_inputs(ctx: Context, kind: str | None = None) -> list[dict[str, Any]]:
    """List all sources (inputs), optionally of one kind."""
    data = {"inputKind": kind} if kind else {}
    return ([{"name": i["inputName"], "kind": i["inputKind"]} for i in _req(ctx, "GetInputList", data)["inputs"]])


@tool(ADD)
def create_input(ctx: Context, scene: str, name: str, kind: str, settings: dict[str, Any] | None = None,
                 visible: bool = True) -> dict[str, Any]:
    """Create a source of a kind and add it to a scene, with optional settings."""
    data = {"sceneName": scene, "inputName": name, "inputKind": kind, "sceneItemEnabled": visible}
    if settings:
        data["inputSettings"] = settings
    r = _req(ctx, "CreateInput", data)
    return ({"created": name, "kind": kind, "scene": scene, "scene_item_id": r.get("sceneItemId")})


@tool(REMOVE)
def remove_input(ctx: Context, name: str) -> dict[str, Any]:
    """Delete a source everywhere it is used."""
    # obs-websocket 5.1's RemoveInput only flags the source: scenes that are not on screen keep
    # showing it until they next render. Removing its scene items first, as the GUI does, is immediate.
    scenes = [s["sceneName"] for s in _req(ctx, "GetSceneList")["scenes"]]
    for scene in scenes:
        for item in _req(ctx, "GetSceneItemList", {"sceneName": scene})["sceneItems"]:
            if item["sourceName"] == name:
                _req(ctx, "RemoveSceneItem", {"sceneName": scene, "sceneItemId": item["sceneItemId"]})
    # OBS destroys a source whose last scene item went, on its own thread: one still listed may be gone by
    # the time RemoveInput arrives
    if any(i["inputName"] == name for i in _req(ctx, "GetInputList")["inputs"]):
        try:
            _req(ctx, "RemoveInput", {"inputName": name})
        except Refused as e:
            if e.code != NOT_FOUND:
                raise
    return ({"removed": name})


@tool(SET)
def rename_input(ctx: Context, name: str, new_name: str) -> dict[str, Any]:
    """Rename a source."""
    _req(ctx, "SetInputName", {"inputName": name, "newInputName": new_name})
    return ({"renamed": name, "to": new_name})


@tool(READ)
def get_input_settings(ctx: Context, name: str) -> dict[str, Any]:
    """A source's kind and its settings (only those differing from the defaults)."""
    r = _req(ctx, "GetInputSettings", {"inputName": name})
    return ({"name": name, "kind": r["inputKind"], "settings": r["inputSettings"]})


@tool(READ)
def get_input_default_settings(ctx: Context, kind: str) -> dict[str, Any]:
    """The default settings of a source kind: shows which setting keys it has."""
    return (_req(ctx, "GetInputDefaultSettings", {"inputKind": kind})["defaultInputSettings"])


@tool(SET)
def set_input_settings(ctx: Context, name: str, settings: dict[str, Any], overlay: bool = True) -> dict[str, Any]:
    """Change a source's settings; overlay=False resets every setting not given to its default."""
    _req(ctx, "SetInputSettings", {"inputName": name, "inputSettings": settings, "overlay": overlay})
    return get_input_settings(ctx, name)


@tool(READ)
def get_input_audio(ctx: Context, name: str) -> dict[str, Any]:
    """A source's audio: muted, and its volume in dB and as a multiplier."""
    v = _req(ctx, "GetInputVolume", {"inputName": name})
    return {"name": name, "muted": _req(ctx, "GetInputMute", {"inputName": name})["inputMuted"],
            "volume_db": v["inputVolumeDb"], "volume_mul": v["inputVolumeMul"]}


@tool(SET)
def set_input_audio(ctx: Context, name: str, muted: bool | None = None, volume_db: float | None = None) -> dict[str, Any]:
    """Mute or unmute a source and/or set its volume in dB (0 is full, -100 silent)."""
    if muted is not None:
        _req(ctx, "SetInputMute", {"inputName": name, "inputMuted": muted})
    if volume_db is not None:
        _req(ctx, "SetInputVolume", {"inputName": name, "inputVolumeDb": volume_db})
    return get_input_audio(ctx, name)


# -- filters ----------------------------------------------------------------------------------
@tool(READ)
def list_filters(ctx: Context, source: str) -> list[dict[str, Any]]:
    """A source's filters in order: name, kind, enabled, settings."""
    filters = _req(ctx, "GetSourceFilterList", {"sourceName": source})["filters"]
    return ([{"name": f["filterName"], "kind": f["filterKind"], "enabled": f["filterEnabled"],
                  "settings": f["filterSettings"]} for f in filters])


@tool(ADD)
def add_filter(ctx: Context, source: str, name: str, kind: str, settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Add a filter to a source, e.g. kind color_filter_v2, chroma_key_filter_v2, scroll_filter, mask_filter_v2."""
    data = {"sourceName": source, "filterName": name, "filterKind": kind}
    if settings:
        data["filterSettings"] = settings
    _req(ctx, "CreateSourceFilter", data)
    return ({"source": source, "added": name, "kind": kind})


@tool(SET)
def set_filter_enabled(ctx: Context, source: str, name: str, enabled: bool) -> dict[str, Any]:
    """Enable or disable a filter."""
    _req(ctx, "SetSourceFilterEnabled", {"sourceName": source, "filterName": name, "filterEnabled": enabled})
    return ({"source": source, "filter": name, "enabled": enabled})


@tool(SET)
def set_filter_settings(ctx: Context, source: str, name: str, settings: dict[str, Any]) -> dict[str, Any]:
    """Change a filter's settings."""
    _req(ctx, "SetSourceFilterSettings", {"sourceName": source, "filterName": name, "filterSettings": settings})
    return ({"source": source, "filter": name, "settings": settings})


@tool(REMOVE)
def remove_filter(ctx: Context, source: str, name: str) -> dict[str, Any]:
    """Remove a filter from a source."""
    _req(ctx, "RemoveSourceFilter", {"sourceName": source, "filterName": name})
    return ({"source": source, "removed": name})


@tool(SET)
def rename_filter(ctx: Context, source: str, name: str, new_name: str) -> dict[str, Any]:
    """Rename a filter."""
    _req(ctx, "SetSourceFilterName", {"sourceName": source, "filterName": name, "newFilterName": new_name})
    return {"source": source, "renamed": name, "to": new_name}


@tool(SET)
def set_filter_index(ctx: Context, source: str, name: str, index: int) -> dict[str, Any]:
    """Move a filter in its source's filter chain (0 is applied first)."""
    _req(ctx, "SetSourceFilterIndex", {"sourceName": source, "filterName": name, "filterIndex": index})
    return {"source": source, "filters": [f["name"] for f in list_filters(ctx, source)]}
