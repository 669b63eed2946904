"""A stdio MCP server (official SDK) for the dry-run tests: each call appends a line to the file it is given."""

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")
LOG = Path(sys.argv[1])


@server.tool()
def add_note(text: str) -> str:
    """Add a note to the notebook."""
    with LOG.open("a", encoding="utf-8") as log:
        log.write(f"add_note {text}\n")
    return "added"


if __name__ == "__main__":
    server.run("stdio")
