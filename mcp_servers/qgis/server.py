"""QGIS MCP server. Every tool is a call to the bridge inside the running QGIS (QGIS_BRIDGE_URL), which runs
it on QGIS's main thread through the same project, layer tree, renderers, canvas and map renderer task the
GUI uses: visible in the GUI, and seen by the probe like the same action by hand. Structured results; a
bridge error is an `isError` result.

Unlike the public QGIS MCP servers there is no "execute code" tool: code run inside QGIS could reach the
probe that verifies the run (apps/qgis/NOTES.md).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from mcp_servers.bridge import bridged_server
from mcp_servers.hints import ACT, ADD, READ, REMOVE, SET

mcp, tool, call = bridged_server(
    "qgis", "QGIS", "QGIS_BRIDGE_URL", "QGIS_BRIDGE_TOKEN",
    instructions="Tools for the running QGIS: the project (open, new, save, CRS), its layers (add vector or "
                 "raster files, remove, order, colour, symbol unit, opacity, notes, CRS, visibility), the map "
                 "canvas (zoom to a layer) and map exports to image or PDF. Layers are named as in the Layers "
                 "panel (or by their id, which get_project_info lists, where two share a name); CRSs as authority "
                 "ids (EPSG:4326).")

Path = Annotated[str, Field(description="an absolute path (~ is the user's home)")]
Unit = Literal["Millimeters", "Points", "Pixels", "Meters at Scale", "Map Units", "Inches"]


@tool(READ)
def get_project_info(ctx: Context) -> dict[str, Any]:
    """The project (file, title, CRS, unsaved changes), every layer top down with its type, source, CRS,
    opacity, visibility, notes, extent, colour and symbol unit, and the map canvas's extent and scale."""
    return call(ctx, "state")


@tool(READ)
def get_layer_info(ctx: Context, name: str) -> dict[str, Any]:
    """One layer as get_project_info describes it."""
    return call(ctx, "layer", name=name)


@tool(READ)
def get_layer_features(ctx: Context, name: str, limit: Annotated[int, Field(ge=1, le=1000)] = 50) -> dict[str, Any]:
    """A vector layer's features: attributes and geometry as WKT (the first `limit`)."""
    return call(ctx, "features", name=name, limit=limit)


@tool(ACT)
def new_project(ctx: Context) -> dict[str, Any]:
    """Start a new, empty project (Project > New), dropping unsaved changes of the open one."""
    return call(ctx, "new_project")


@tool(ACT)
def open_project(ctx: Context, path: Path) -> dict[str, Any]:
    """Open a project file (.qgz or .qgs), as Project > Open does."""
    return call(ctx, "open_project", path=path)


@tool(SET)
def save_project(ctx: Context, path: Annotated[str | None, Field(description="save as this .qgz/.qgs file; "
                                                                  "default: the project's own file")] = None) -> dict[str, Any]:
    """Save the project (Project > Save, or Save As with a path)."""
    return call(ctx, "save_project", path=path)


@tool(SET)
def set_project_crs(ctx: Context, crs: Annotated[str, Field(description="e.g. EPSG:3857")]) -> dict[str, Any]:
    """Set the project's coordinate reference system (Project > Properties > CRS)."""
    return call(ctx, "set_project_crs", crs=crs)


@tool(ADD)
def add_vector_layer(ctx: Context, path: Path,
                     layer: Annotated[str | None, Field(description="a layer inside the file (GeoPackage)")] = None,
                     name: Annotated[str | None, Field(description="the layer's name (default: the file's)")] = None
                     ) -> dict[str, Any]:
    """Add a vector layer from a file (shapefile, GeoPackage, GeoJSON, ...), as Layer > Add Layer does."""
    return call(ctx, "add_vector_layer", path=path, layer=layer, name=name)


@tool(ADD)
def add_raster_layer(ctx: Context, path: Path,
                     name: Annotated[str | None, Field(description="the layer's name (default: the file's)")] = None
                     ) -> dict[str, Any]:
    """Add a raster layer from a file (GeoTIFF, ...), as Layer > Add Layer > Add Raster Layer does."""
    return call(ctx, "add_raster_layer", path=path, name=name)


@tool(REMOVE)
def remove_layer(ctx: Context, name: str) -> dict[str, Any]:
    """Remove a layer from the project (the file stays)."""
    return call(ctx, "remove_layer", name=name)


@tool(SET)
def set_layer_order(ctx: Context, order: Annotated[list[str], Field(min_length=1, description=
                                                                    "layer names, top down")]) -> dict[str, Any]:
    """Reorder the Layers panel: the named layers go to the top in this order; the others keep theirs below."""
    return call(ctx, "set_layer_order", order=order)


@tool(SET)
def set_layer_color(ctx: Context, name: str,
                    color: Annotated[str, Field(description="#rrggbb")]) -> dict[str, Any]:
    """Set a single-symbol vector layer's colour (Layer Properties > Symbology)."""
    return call(ctx, "set_layer_color", name=name, color=color)


@tool(SET)
def set_symbol_unit(ctx: Context, name: str, unit: Unit) -> dict[str, Any]:
    """Set the unit of a single-symbol vector layer's symbol sizes (Layer Properties > Symbology > Unit)."""
    return call(ctx, "set_symbol_unit", name=name, unit=unit)


@tool(SET)
def set_layer_opacity(ctx: Context, name: str,
                      opacity: Annotated[float, Field(ge=0, le=100, description="percent")]) -> dict[str, Any]:
    """Set a layer's opacity (Layer Properties > Symbology > Layer Rendering > Opacity)."""
    return call(ctx, "set_layer_opacity", name=name, opacity=opacity)


@tool(SET)
def set_layer_notes(ctx: Context, name: str, notes: str) -> dict[str, Any]:
    """Set a layer's notes (Layers panel > Add Layer Notes...); empty text removes them."""
    return call(ctx, "set_layer_notes", name=name, notes=notes)


@tool(SET)
def set_layer_crs(ctx: Context, name: str, crs: Annotated[str, Field(description="e.g. EPSG:32632")]) -> dict[str, Any]:
    """Set the CRS a layer's coordinates are read in (Layers panel > Layer CRS > Set Layer CRS)."""
    return call(ctx, "set_layer_crs", name=name, crs=crs)


@tool(SET)
def set_layer_visibility(ctx: Context, name: str, visible: bool) -> dict[str, Any]:
    """Show or hide a layer (its checkbox in the Layers panel)."""
    return call(ctx, "set_layer_visibility", name=name, visible=visible)


@tool(SET)
def rename_layer(ctx: Context, name: str, new_name: str) -> dict[str, Any]:
    """Rename a layer."""
    return call(ctx, "rename_layer", name=name, new_name=new_name)


@tool(SET)
def zoom_to_layer(ctx: Context, name: str) -> dict[str, Any]:
    """Zoom the map canvas to a layer's extent (Layers panel > Zoom to Layer)."""
    return call(ctx, "zoom_to_layer", name=name)


@tool(SET)
def zoom_full(ctx: Context) -> dict[str, Any]:
    """Zoom the map canvas to all layers (View > Zoom Full)."""
    return call(ctx, "zoom_full")


@tool(ADD)
def export_map(ctx: Context, path: Annotated[str, Field(description="the file to write; its extension picks "
                                                        "the format: .png, .jpg, .tif, .bmp or .pdf")],
               width: Annotated[int, Field(ge=1, le=20000, description="pixels")],
               height: Annotated[int, Field(ge=1, le=20000, description="pixels")]) -> dict[str, Any]:
    """Export the map canvas's view to an image or PDF of this size in pixels (Project > Import/Export >
    Export Map to Image / to PDF)."""
    return call(ctx, "export_map", path=path, width=width, height=height)


def main() -> None:
    mcp.run("stdio")


if __name__ == "__main__":
    main()
