"""MCP servers for the apps, written with the `mcp` SDK."""
