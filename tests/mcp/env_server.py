"""A stdio MCP server (official SDK) for the tests: reports its environment and can be told to die."""

import os
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("env")


@server.tool()
def getenv(name: str) -> str:
    """The value of an environment variable of the server process ('' when unset)."""
    return os.environ.get(name, "")


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def busy(seconds: float) -> str:
    """Works (blocks) for ``seconds``: a closed stdin does not stop it meanwhile."""
    time.sleep(seconds)
    return "done"


if __name__ == "__main__":
    server.run("stdio")
