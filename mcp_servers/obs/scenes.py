"""OBS tools: scenes and scene items (a source placed in a scene, listed bottom to top)."""

from __future__ import annotations

import time
from typing import Any

from mcp.server.mcpserver import Context

from mcp_servers.hints import ADD, READ, REMOVE, SET
from mcp_servers.obs.server import _item_id, _req, tool


# -- scenes -----------------------------------------------------------------------------------
@tool(READ)
def list_scenes(ctx: Context) -> dict[str, Any]:
    """List the scenes in Scenes-dock order (top first), with the current program scene."""
    r = _req(ctx, "GetSceneList")
    return ({"scenes": [s["sceneName"] for s in reversed(r["scenes"])],
                 "current_program_scene": r["currentProgramSceneName"]})


@tool(ADD)
def create_scene(ctx: Context, name: str) -> dict[str, Any]:
    """Create an empty scene."""
    _req(ctx, "CreateScene", {"sceneName": name})
    return ({"created": name})


@tool(REMOVE)
def remove_scene(ctx: Context, name: str) -> dict[str, Any]:
    """Delete a scene."""
    _req(ctx, "RemoveScene", {"sceneName": name})
    return ({"removed": name})


@tool(SET)
def rename_scene(ctx: Context, name: str, new_name: str) -> dict[str, Any]:
    """Rename a scene."""
    _req(ctx, "SetSceneName", {"sceneName": name, "newSceneName": new_name})
    return ({"renamed": name, "to": new_name})


def _until(ctx: Context, request: str, field: str, want: Any, timeout: float = 10.0) -> Any:
    """Poll a Get request until its `field` is `want` (OBS applies scene and studio-mode requests on its UI
    thread after it answers them), for at most `timeout` seconds; the last value read."""
    deadline = time.monotonic() + timeout
    while True:
        value = _req(ctx, request).get(field)
        if value == want or time.monotonic() >= deadline:
            return value
        time.sleep(0.05)


@tool(SET)
def set_current_scene(ctx: Context, name: str) -> dict[str, Any]:
    """Switch the program output to a scene, using the current transition; returns once OBS reports the new
    program scene (as a person sees it switch), not when the request is merely accepted."""
    _req(ctx, "SetCurrentProgramScene", {"sceneName": name})
    return {"program_scene": _until(ctx, "GetCurrentProgramScene", "currentProgramSceneName", name)}


# -- scene items ----------------------------------------------------------------------------
@tool(READ)
def list_scene_items(ctx: Context, scene: str) -> list[dict[str, Any]]:
    """List a scene's items bottom to top: source name, kind, visible, locked, index, transform."""
    items = _req(ctx, "GetSceneItemList", {"sceneName": scene})["sceneItems"]
    return ([{"source": i["sourceName"], "kind": i.get("inputKind"), "visible": i["sceneItemEnabled"],
                  "locked": i["sceneItemLocked"], "index": i["sceneItemIndex"],
              "transform": i.get("sceneItemTransform")} for i in items])


@tool(SET)
def set_scene_item_visible(ctx: Context, scene: str, source: str, visible: bool) -> dict[str, Any]:
    """Show or hide a source in a scene (the eye icon)."""
    _req(ctx, "SetSceneItemEnabled", {"sceneName": scene, "sceneItemId": _item_id(ctx, scene, source),
                                 "sceneItemEnabled": visible})
    return ({"scene": scene, "source": source, "visible": visible})


@tool(SET)
def set_scene_item_index(ctx: Context, scene: str, source: str, index: int) -> dict[str, Any]:
    """Move a source to a position in its scene: 0 is the bottom."""
    _req(ctx, "SetSceneItemIndex", {"sceneName": scene, "sceneItemId": _item_id(ctx, scene, source), "sceneItemIndex": index})
    return {"scene": scene, "items": list_scene_items(ctx, scene)}


@tool(REMOVE)
def remove_scene_item(ctx: Context, scene: str, source: str) -> dict[str, Any]:
    """Remove a source from one scene (the source itself stays if other scenes use it)."""
    _req(ctx, "RemoveSceneItem", {"sceneName": scene, "sceneItemId": _item_id(ctx, scene, source)})
    return ({"scene": scene, "removed": source})


@tool(SET)
def set_scene_item_transform(ctx: Context, scene: str, source: str, transform: dict[str, Any]) -> dict[str, Any]:
    """Set position/scale/rotation/crop of a source in a scene, e.g. {"positionX": 10, "scaleX": 0.5}."""
    _req(ctx, "SetSceneItemTransform", {"sceneName": scene, "sceneItemId": _item_id(ctx, scene, source),
                                   "sceneItemTransform": transform})
    return ({"scene": scene, "source": source, "transform": transform})


@tool(ADD)
def add_scene_item(ctx: Context, scene: str, source: str, visible: bool = True) -> dict[str, Any]:
    """Add an existing source (or a scene, nested) to a scene (Add > Existing)."""
    r = _req(ctx, "CreateSceneItem", {"sceneName": scene, "sourceName": source, "sceneItemEnabled": visible})
    return {"scene": scene, "source": source, "scene_item_id": r.get("sceneItemId")}


@tool(ADD)
def duplicate_scene_item(ctx: Context, scene: str, source: str, to_scene: str | None = None) -> dict[str, Any]:
    """Place a scene item again, in the same scene or another (the same source, not a copy of it)."""
    data = {"sceneName": scene, "sceneItemId": _item_id(ctx, scene, source)}
    if to_scene:
        data["destinationSceneName"] = to_scene
    r = _req(ctx, "DuplicateSceneItem", data)
    return {"scene": to_scene or scene, "source": source, "scene_item_id": r.get("sceneItemId")}


@tool(SET)
def set_scene_item_locked(ctx: Context, scene: str, source: str, locked: bool) -> dict[str, Any]:
    """Lock or unlock a source in a scene (the lock icon)."""
    _req(ctx, "SetSceneItemLocked", {"sceneName": scene, "sceneItemId": _item_id(ctx, scene, source),
                                     "sceneItemLocked": locked})
    return {"scene": scene, "source": source, "locked": locked}


# -- studio mode ------------------------------------------------------------------------------
@tool(SET)
def set_studio_mode(ctx: Context, enabled: bool) -> dict[str, Any]:
    """Turn studio mode (a preview beside the program) on or off."""
    _req(ctx, "SetStudioModeEnabled", {"studioModeEnabled": enabled})
    return {"studio_mode": _until(ctx, "GetStudioModeEnabled", "studioModeEnabled", enabled)}


@tool(SET)
def set_preview_scene(ctx: Context, name: str) -> dict[str, Any]:
    """In studio mode, put a scene in the preview."""
    _req(ctx, "SetCurrentPreviewScene", {"sceneName": name})
    return {"preview_scene": _until(ctx, "GetCurrentPreviewScene", "currentPreviewSceneName", name)}


@tool(SET)
def transition_to_program(ctx: Context) -> dict[str, Any]:
    """In studio mode, send the preview to the program with the current transition; returns once the program
    shows it."""
    preview = _req(ctx, "GetCurrentPreviewScene").get("currentPreviewSceneName")
    _req(ctx, "TriggerStudioModeTransition")
    return {"program_scene": _until(ctx, "GetCurrentProgramScene", "currentProgramSceneName", preview)}
