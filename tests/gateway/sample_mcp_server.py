"""A small real MCP server (stdio) for the gateway's tests."""

from typing import Any

from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

PNG_1PX = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                        "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082")
mcp = MCPServer("sample")


@mcp.tool(structured_output=False)
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@mcp.tool()
def picture() -> list:
    """A caption and a picture."""
    return ["a pixel", Image(data=PNG_1PX, format="png")]


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False), structured_output=True)
def count(text: str) -> dict[str, Any]:
    """Count the words of a text (a structured result)."""
    return {"words": len(text.split()), "text": text}


@mcp.tool(structured_output=False)
def fail(reason: str) -> str:
    """Always fails with the reason."""
    raise ToolError(reason)


@mcp.tool(structured_output=False)
def crash() -> str:
    """A bug: raises something that is not a ToolError (the client is told only the tool's name)."""
    return {}["sceneItems"]


if __name__ == "__main__":
    mcp.run("stdio")
