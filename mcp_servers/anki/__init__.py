"""The Anki MCP server: acts on the running Anki through the mcpworld add-on's bridge."""
