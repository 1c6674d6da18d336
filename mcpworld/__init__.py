"""mcpworld: a white-box testbed for GUI, MCP and hybrid computer-use agents."""

__version__ = "0.1.0"
