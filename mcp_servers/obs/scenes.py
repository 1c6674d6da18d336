"""OBS tools: scenes and scene items (a source placed in a scene, listed bottom to top)."""

from __future__ import annotations

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


@tool(SET)
def set_current_scene(ctx: Context, name: str) -> dict[str, Any]:
    """Switch the program output to a scene, using the current transition."""
    _req(ctx, "SetCurrentProgramScene", {"sceneName": name})
    return ({"program_scene": name})


# -- scene items ----------------------------------------------------------------------------
@tool(READ)
def list_scene_items(ctx: Context, scene: str) -> list[dict[str, Any]]:
    """List a scene's items bottom to top: source name, kind, visible, locked, index."""
    items = _req(ctx, "GetSceneItemList", {"sceneName": scene})["sceneItems"]
    return ([{"source": i["sourceName"], "kind": i.get("inputKind"), "visible": i["sceneItemEnabled"],
                  "locked": i["sceneItemLocked"], "index": i["sceneItemIndex"]} for i in items])


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
