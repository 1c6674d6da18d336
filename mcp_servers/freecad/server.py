"""FreeCAD MCP server. Every tool is a call to the bridge inside the running FreeCAD (FREECAD_BRIDGE_URL),
which runs it on FreeCAD's GUI thread through the same documents, Part Design bodies and features and
preferences the GUI's commands use: visible in the GUI, and seen by the probe like the same action by
hand. Structured results; a bridge error is an `isError` result.

Unlike the public FreeCAD MCP servers there is no "execute code" tool: code run inside FreeCAD could
reach the probe that verifies the run (apps/freecad/NOTES.md).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from mcp_servers.bridge import bridged_server
from mcp_servers.hints import ACT, ADD, READ, REMOVE, SET

mcp, tool, call = bridged_server(
    "freecad", "FreeCAD", "FREECAD_BRIDGE_URL", "FREECAD_BRIDGE_TOKEN",
    instructions="Tools for the running FreeCAD: documents (new, open, save, close), Part Design bodies and "
                 "their additive and subtractive primitives (box, cylinder, sphere, cone, ellipsoid, torus, "
                 "prism, wedge), fillets and chamfers, mirrors and patterns, threaded holes, sketches (lines, circles, arcs), Draft rectangles, circles and polygons, object properties and placements, workbenches and preferences (edit mode, "
                 "unit schema, language). Lengths are millimetres, angles degrees. Documents and objects are "
                 "named by their internal name or their label.")

Path = Annotated[str, Field(description="an absolute path (~ is the user's home)")]
Document = Annotated[str | None, Field(description="a document's name or label; default: the active one")]
Kind = Literal["Box", "Cylinder", "Sphere", "Cone", "Ellipsoid", "Torus", "Prism", "Wedge"]




PlacementArg = Annotated[dict[str, Any] | None, Field(description=(
    "{'position': [x, y, z], 'axis': [x, y, z], 'angle': degrees}: where the object sits, rotated by "
    "`angle` about `axis` (default: the origin, unrotated)"))]


@tool(READ)
def get_state(ctx: Context) -> dict[str, Any]:
    """Everything open: each document's file and objects (type, label, properties, placement, volume, a
    sketch's geometry), the active document and workbench, the object in edit mode and the preferences."""
    return call(ctx, "state")


@tool(READ)
def list_documents(ctx: Context) -> dict[str, Any]:
    """The open documents (name, label, file, objects) and which one is active."""
    return call(ctx, "list_documents")


@tool(READ)
def get_object(ctx: Context, name: str, document: Document = None) -> dict[str, Any]:
    """One object: its type, label, properties, placement and shape (volume, solids, edges)."""
    return call(ctx, "get_object", name=name, document=document)


@tool(ACT)
def new_document(ctx: Context, name: Annotated[str | None, Field(description="default: Unnamed")] = None) -> dict[str, Any]:
    """Create a new, empty document and make it active (File > New)."""
    return call(ctx, "new_document", name=name)


@tool(ACT)
def open_document(ctx: Context, path: Path) -> dict[str, Any]:
    """Open a FreeCAD document (.FCStd) and make it active (File > Open)."""
    return call(ctx, "open_document", path=path)


@tool(SET)
def save_document(ctx: Context, path: Annotated[str | None, Field(description=(
        "save as this .FCStd file; default: the document's own file"))] = None,
        document: Document = None) -> dict[str, Any]:
    """Save a document (File > Save), or save it under a new file (File > Save As)."""
    return call(ctx, "save_document", path=path, document=document)


@tool(REMOVE)
def close_document(ctx: Context, document: Document = None) -> dict[str, Any]:
    """Close a document, dropping unsaved changes (File > Close)."""
    return call(ctx, "close_document", document=document)


@tool(ADD)
def create_body(ctx: Context, document: Document = None) -> dict[str, Any]:
    """Add a Part Design body to a document and make it the active body (Part Design > Create body)."""
    return call(ctx, "create_body", document=document)


@tool(ADD)
def add_primitive(ctx: Context, kind: Kind,
                  properties: Annotated[dict[str, float], Field(description=(
                      "FreeCAD's own property names: Box Length/Width/Height; Cylinder Radius/Height/Angle; "
                      "Sphere Radius/Angle1-3; Cone Radius1/Radius2/Height/Angle; Ellipsoid Radius1-3/Angle1-3; "
                      "Torus Radius1/Radius2/Angle1-3; Prism Polygon (sides)/Circumradius/Height/FirstAngle/"
                      "SecondAngle; Wedge Xmin/Xmax/Ymin/Ymax/Zmin/Zmax/X2min/X2max/Z2min/Z2max"))],
                  operation: Literal["additive", "subtractive"] = "additive",
                  placement: PlacementArg = None,
                  body: Annotated[str | None, Field(description="default: the document's only body "
                                                                "(one is created if there is none)")] = None,
                  document: Document = None) -> dict[str, Any]:
    """Add a Part Design additive or subtractive primitive to a body (Part Design > Create an additive /
    subtractive primitive), and recompute."""
    return call(ctx, "add_primitive", kind=kind, properties=properties, operation=operation, placement=placement,
                body=body, document=document)


@tool(ADD)
def add_dressup(ctx: Context, kind: Literal["Fillet", "Chamfer"],
                size: Annotated[float, Field(description="the fillet's radius or the chamfer's size (mm)")],
                edges: Annotated[Literal["all"] | list[str], Field(description=(
                    "'all' (the panel's Use All Edges) or the tip's edges by name: ['Edge1', 'Edge5']"))] = "all",
                body: Annotated[str | None, Field(description="default: the document's only body")] = None,
                document: Document = None) -> dict[str, Any]:
    """Round or bevel edges of a body's tip (Part Design > Apply a dress-up feature > Fillet / Chamfer),
    and recompute."""
    return call(ctx, "add_dressup", kind=kind, size=size, edges=edges, body=body, document=document)


Body = Annotated[str | None, Field(description="default: the document's only body")]
SketchElement = Annotated[dict[str, Any], Field(description=(
    "{'type': 'line', 'start': [x, y], 'end': [x, y]}, {'type': 'circle', 'center': [x, y], 'radius': r}, "
    "{'type': 'arc', 'center': [x, y], 'radius': r, 'start_angle': deg, 'end_angle': deg} (counter-clockwise) "
    "or {'type': 'point', 'at': [x, y]}; add 'construction': true for construction geometry"))]


@tool(ADD)
def add_sketch(ctx: Context, geometry: list[SketchElement],
               plane: Literal["XY", "XZ", "YZ"] = "XY",
               offset: Annotated[float, Field(description="mm along the plane's normal")] = 0.0,
               body: Annotated[str | None, Field(description="default: the document's only body "
                                                             "(one is created if there is none)")] = None,
               document: Document = None) -> dict[str, Any]:
    """Add a sketch to a body on one of its origin planes, holding these elements in the sketch's own x/y
    coordinates (Part Design > Create sketch, then the Sketcher's line, circle, arc and point tools)."""
    return call(ctx, "add_sketch", geometry=geometry, plane=plane, offset=offset, body=body, document=document)


@tool(ADD)
def add_pattern(ctx: Context, kind: Literal["Mirrored", "LinearPattern", "PolarPattern"],
                plane: Annotated[Literal["XY", "XZ", "YZ"], Field(description="Mirrored: the mirror plane")] = "XY",
                axis: Annotated[Literal["X", "Y", "Z"], Field(description="the patterns' direction or axis")] = "Z",
                length: Annotated[float | None, Field(description="LinearPattern: overall length (mm)")] = None,
                angle: Annotated[float, Field(description="PolarPattern: overall angle (degrees)")] = 360.0,
                occurrences: Annotated[int | None, Field(description="the patterns: how many copies in all")] = None,
                feature: Annotated[str | None, Field(description="the feature to repeat; default: the body's tip")] = None,
                body: Body = None, document: Document = None) -> dict[str, Any]:
    """Mirror or repeat a feature of a body (Part Design > Apply a pattern > Mirrored / LinearPattern /
    PolarPattern) about or along the body's origin planes and axes, and recompute."""
    return call(ctx, "add_pattern", kind=kind, plane=plane, axis=axis, length=length, angle=angle,
                occurrences=occurrences, feature=feature, body=body, document=document)


@tool(ADD)
def add_hole(ctx: Context, size: Annotated[str, Field(description="ISO metric regular thread size, e.g. M6")],
             depth: Annotated[float, Field(description="mm")],
             center: Annotated[list[float], Field(description="[x, y] of the hole on the solid's top face")] = [0, 0],
             threaded: bool = True,
             model_thread: Annotated[bool, Field(description="model the thread's helix in the solid")] = False,
             body: Body = None, document: Document = None) -> dict[str, Any]:
    """Drill a hole down into a body's top face (Part Design > Create a hole feature on a sketch's circle):
    ISO metric regular profile, standard fit, `depth` deep, optionally threaded with the thread modelled."""
    return call(ctx, "add_hole", size=size, depth=depth, center=center, threaded=threaded,
                model_thread=model_thread, body=body, document=document)


@tool(ADD)
def add_draft(ctx: Context, kind: Literal["Rectangle", "Circle", "Polygon"],
              length: Annotated[float | None, Field(description="Rectangle: along x (mm)")] = None,
              height: Annotated[float | None, Field(description="Rectangle: along y (mm)")] = None,
              at: Annotated[list[float], Field(description="Rectangle: its lower-left corner [x, y]")] = [0, 0],
              radius: Annotated[float | None, Field(description="Circle: radius; Polygon: circumradius (mm)")] = None,
              sides: Annotated[int | None, Field(description="Polygon: number of sides")] = None,
              center: Annotated[list[float], Field(description="Circle, Polygon: centre [x, y]")] = [0, 0],
              document: Document = None) -> dict[str, Any]:
    """Draw a 2D Draft shape in the XY plane (Draft workbench: Rectangle, Circle, Polygon), as a face."""
    return call(ctx, "add_draft", kind=kind, length=length, height=height, at=at, radius=radius, sides=sides,
                center=center, document=document)


@tool(SET)
def set_properties(ctx: Context, name: str,
                   properties: Annotated[dict[str, Any], Field(description="property name -> value, as in "
                                                                           "FreeCAD's property view")] = {},
                   placement: PlacementArg = None, document: Document = None) -> dict[str, Any]:
    """Change an object's properties and/or placement (its property view), and recompute."""
    return call(ctx, "set_properties", name=name, properties=properties, placement=placement, document=document)


@tool(REMOVE)
def delete_object(ctx: Context, name: str, document: Document = None) -> dict[str, Any]:
    """Delete an object (Edit > Delete), and recompute."""
    return call(ctx, "delete_object", name=name, document=document)


@tool(SET)
def activate_workbench(ctx: Context, name: Literal["PartDesignWorkbench", "PartWorkbench", "SketcherWorkbench",
                                                   "DraftWorkbench", "StartWorkbench"]) -> dict[str, Any]:
    """Switch the active workbench (View > Workbench)."""
    return call(ctx, "activate_workbench", name=name)


@tool(SET)
def set_preference(ctx: Context, name: Literal["user_edit_mode", "unit_schema", "language"],
                   value: Annotated[int | str, Field(description=(
                       "user_edit_mode: Default, Transform, Cutting or Color (or its index); unit_schema: the "
                       "schema's index in Edit > Preferences > General > Units (0 Standard mm/kg/s/degree, "
                       "1 MKS, 2 US customary, 3 Imperial decimal, 4 Building Euro, 5 Building US, 6 Metric small "
                       "parts & CNC, 7 Imperial for Civil, 8 FEM); language: as FreeCAD names it (English, "
                       "German, French, ...)"))]) -> dict[str, Any]:
    """Change a preference as Edit > Preferences (or the edit mode menu) does."""
    return call(ctx, "set_preference", name=name, value=value)


def main() -> None:
    mcp.run("stdio")


if __name__ == "__main__":
    main()
