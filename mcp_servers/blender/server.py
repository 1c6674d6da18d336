"""Blender MCP server. Every tool is a call to the bridge inside the running Blender (BLENDER_BRIDGE_URL),
which runs it as Blender's own operators on its main thread: visible in the GUI, undoable, and seen by
the probe like the same action by hand. Structured results; a bridge error is an `isError` result.

Unlike PyPI's blender-mcp there is no "execute Python" tool: code run inside Blender could reach the
probe that verifies the run (apps/blender/NOTES.md).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from mcp_servers.bridge import Bridge
from mcp_servers.hints import ACT, ADD, READ, REMOVE, SET

Vec3 = Annotated[list[float], Field(min_length=3, max_length=3, description="x, y, z")]


@asynccontextmanager
async def lifespan(server: MCPServer) -> AsyncIterator[Bridge]:
    yield Bridge(os.environ.get("BLENDER_BRIDGE_URL", "http://127.0.0.1:9876"),
                 os.environ.get("BLENDER_BRIDGE_TOKEN", ""), "Blender", timeout=70.0)


mcp = MCPServer("blender", lifespan=lifespan,
                instructions="Tools for the running Blender: the scene and its objects (add, delete, rename, "
                             "transform, join, origin, vertices, text), modes, the 3D view (angle, shading, local "
                             "view), materials, modifiers, windows, and .blend/.obj files. Units are Blender's "
                             "(metres, radians).")


def tool(annotations: ToolAnnotations):
    return mcp.tool(annotations=annotations, structured_output=True)


def _bridge(ctx: Context, method: str, **params: Any) -> Any:
    return ctx.request_context.lifespan_context.call(method, params)


@tool(READ)
def get_scene_info(ctx: Context) -> dict[str, Any]:
    """The open file, windows, 3D views (shading, view, local view), mode and every object with its
    transform, materials and modifiers."""
    return _bridge(ctx, "scene")


@tool(READ)
def get_object_info(ctx: Context, name: str) -> dict[str, Any]:
    """One object in full: transform, dimensions, mesh (vertex and face counts, vertex coordinates of
    small meshes), text, metaball elements, materials, modifiers."""
    return _bridge(ctx, "object", name=name)


@tool(ADD)
def add_object(ctx: Context,
               kind: Literal["mesh", "metaball", "text", "camera", "light", "empty"],
               subtype: Annotated[str | None, Field(description="mesh: cube, plane, circle, uv_sphere, ico_sphere, "
                                                    "cylinder, cone, torus, grid, monkey; metaball: ball, capsule, "
                                                    "plane, ellipsoid, cube; light: point, sun, spot, area")] = None,
               location: Vec3 | None = None, rotation: Vec3 | None = None, scale: Vec3 | None = None,
               name: str | None = None) -> dict[str, Any]:
    """Add an object at the 3D cursor (or `location`), as Shift+A does; it becomes the active object."""
    return _bridge(ctx, "add_object", kind=kind, subtype=subtype, location=location, rotation=rotation,
                   scale=scale, name=name)


@tool(REMOVE)
def delete_objects(ctx: Context, names: list[str] | None = None, all: bool = False) -> dict[str, Any]:
    """Delete the named objects, or every object in the scene with all=true."""
    return _bridge(ctx, "delete_objects", names=names, all=all or None)


@tool(SET)
def set_transform(ctx: Context, name: str, location: Vec3 | None = None, rotation: Vec3 | None = None,
                  scale: Vec3 | None = None) -> dict[str, Any]:
    """Set an object's location (m), rotation (Euler XYZ, radians) and/or scale."""
    return _bridge(ctx, "set_transform", name=name, location=location, rotation=rotation, scale=scale)


@tool(SET)
def clear_transform(ctx: Context, name: str,
                    what: list[Literal["location", "rotation", "scale"]] | None = None) -> dict[str, Any]:
    """Clear an object's location, rotation and/or scale (Alt+G, Alt+R, Alt+S); location by default."""
    return _bridge(ctx, "clear_transform", name=name, what=what)


@tool(SET)
def rename_object(ctx: Context, name: str, new_name: str) -> dict[str, Any]:
    """Rename an object."""
    return _bridge(ctx, "rename_object", name=name, new_name=new_name)


@tool(SET)
def set_mode(ctx: Context, mode: Literal["OBJECT", "EDIT", "SCULPT", "VERTEX_PAINT", "WEIGHT_PAINT", "TEXTURE_PAINT"],
             name: str | None = None) -> dict[str, Any]:
    """Make an object (default: the active one) active and switch it to a mode, as Tab or the mode menu do."""
    return _bridge(ctx, "set_mode", name=name, mode=mode)


@tool(SET)
def set_view(ctx: Context, view: Literal["TOP", "BOTTOM", "FRONT", "BACK", "LEFT", "RIGHT", "CAMERA"]) -> dict[str, Any]:
    """Point the 3D view along an axis (numpad 7, 1, 3 ...) or through the camera (numpad 0)."""
    return _bridge(ctx, "set_view", view=view)


@tool(SET)
def set_shading(ctx: Context, type: Literal["WIREFRAME", "SOLID", "MATERIAL", "RENDERED"]) -> dict[str, Any]:
    """The 3D view's shading (viewport shading buttons, Z pie menu)."""
    return _bridge(ctx, "set_shading", type=type)


@tool(ACT)
def toggle_local_view(ctx: Context, names: list[str] | None = None) -> dict[str, Any]:
    """Enter local view with the named (default: the selected) objects, or leave it (numpad /)."""
    return _bridge(ctx, "local_view", names=names)


@tool(ADD)
def add_material(ctx: Context, object: str, material: str | None = None,
                 color: Annotated[list[float] | None, Field(min_length=3, max_length=4, description="RGB(A), 0-1")] = None
                 ) -> dict[str, Any]:
    """Give an object a material: the named one if it exists, else a new one (with this base colour)."""
    return _bridge(ctx, "add_material", object=object, material=material, color=color)


@tool(ADD)
def add_modifier(ctx: Context, object: str,
                 type: Annotated[str, Field(description="Blender's modifier type, e.g. SUBSURF, MIRROR, ARRAY, BEVEL, "
                                                        "SOLIDIFY, TRIANGULATE, DECIMATE, WIREFRAME")],
                 name: str | None = None,
                 settings: Annotated[dict[str, Any] | None, Field(description="modifier properties, e.g. {\"levels\": 2}")] = None
                 ) -> dict[str, Any]:
    """Add a modifier to an object's stack."""
    return _bridge(ctx, "add_modifier", object=object, type=type, name=name, settings=settings)


@tool(ACT)
def apply_modifier(ctx: Context, object: str, modifier: str | None = None) -> dict[str, Any]:
    """Apply a modifier (default: the first in the stack) to the object's mesh, removing it from the stack."""
    return _bridge(ctx, "apply_modifier", object=object, modifier=modifier)


@tool(ACT)
def join_objects(ctx: Context, names: list[str], into: str | None = None) -> dict[str, Any]:
    """Join mesh objects into one (Ctrl+J); `into` (default: the first) keeps its name and origin."""
    return _bridge(ctx, "join_objects", names=names, into=into)


@tool(SET)
def set_origin(ctx: Context, object: str,
               type: Literal["GEOMETRY_ORIGIN", "ORIGIN_GEOMETRY", "ORIGIN_CURSOR", "ORIGIN_CENTER_OF_MASS",
                             "ORIGIN_CENTER_OF_VOLUME"],
               center: Literal["MEDIAN", "BOUNDS"] = "MEDIAN") -> dict[str, Any]:
    """Object > Set Origin. ORIGIN_CENTER_OF_MASS is "Origin to Center of Mass (Surface)"."""
    return _bridge(ctx, "set_origin", object=object, type=type, center=center)


@tool(SET)
def move_vertices(ctx: Context, object: str,
                  moves: Annotated[list[dict[str, Vec3]], Field(description="[{\"from\": [x,y,z], \"to\": [x,y,z]}], "
                                                                            "local coordinates")]) -> dict[str, Any]:
    """Move mesh vertices, each found by its current local coordinates, to new ones: in Edit Mode as by hand
    (each vertex selected, then moved; the object is left in the mode it was in)."""
    return _bridge(ctx, "move_vertices", object=object, moves=moves)


@tool(SET)
def set_text(ctx: Context, object: str, text: str) -> dict[str, Any]:
    """Set a text object's text."""
    return _bridge(ctx, "set_text", object=object, text=text)


@tool(SET)
def set_metaball_element(ctx: Context, object: str, index: int = 0,
                         type: Literal["BALL", "CAPSULE", "PLANE", "ELLIPSOID", "CUBE"] | None = None,
                         radius: float | None = None, stiffness: float | None = None,
                         size: Annotated[Vec3 | None, Field(description="Size X, Y, Z (capsule, plane, ellipsoid and "
                                                                         "cube elements)")] = None,
                         co: Annotated[Vec3 | None, Field(description="the element's location in the object")] = None
                         ) -> dict[str, Any]:
    """Change one element of a metaball (Properties > Data > Active Element): its type, radius, stiffness,
    size or location."""
    return _bridge(ctx, "set_metaball_element", object=object, index=index, type=type, radius=radius,
                   stiffness=stiffness, size=size, co=co)


@tool(ACT)
def open_file(ctx: Context, path: str) -> dict[str, Any]:
    """Open a .blend file (File > Open); unsaved changes to the current one are lost."""
    return _bridge(ctx, "open_file", path=path)


@tool(SET)
def save_file(ctx: Context, path: str | None = None) -> dict[str, Any]:
    """Save the file (Ctrl+S), or save it as `path` (File > Save As), an absolute .blend path."""
    return _bridge(ctx, "save_file", path=path)


@tool(ADD)
def import_obj(ctx: Context, paths: list[str]) -> dict[str, Any]:
    """Import Wavefront .obj files (File > Import > Wavefront (.obj)); the new objects' names."""
    return _bridge(ctx, "import_obj", paths=paths)


@tool(ADD)
def new_window(ctx: Context) -> dict[str, Any]:
    """Open a new main window (Window > New Window)."""
    return _bridge(ctx, "new_window")


def main() -> None:
    mcp.run("stdio")


if __name__ == "__main__":
    main()
