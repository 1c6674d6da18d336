"""The gateway: one tool list (computer, bash, edit and every app MCP tool) filtered by mode."""
