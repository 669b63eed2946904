"""MCP servers as sources of crew tools (the ``crew-agents[mcp]`` extra).

Importing this package does not import the ``mcp`` SDK; opening a server does (and says
how to install the extra when it is missing).
"""

from crew.errors import MCPStartupError
from crew.mcp.opening import open_servers
from crew.mcp.server import MCPServer
from crew.mcp.tool import MCPTool

__all__ = ["MCPServer", "MCPStartupError", "MCPTool", "open_servers"]
