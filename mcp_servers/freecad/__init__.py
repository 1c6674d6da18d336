"""FreeCAD MCP server: tools that call the bridge inside the running FreeCAD."""
