"""``crew serve``: crews as services other programs call (an MCP server, an HTTP API, an A2A agent).

Holds what a served crew is to a client (``served``: name, description, input and output
schemas, input checks), the server's kickoffs (``kickoffs``: bounded, recorded, streamed,
interrupted at shutdown), the three doors (``mcp_server`` on the MCP SDK, ``http_api`` on
Starlette, ``a2a_agent`` on the a2a-sdk), the HTTP safety rules (``guard``: loopback by
default, the token, body caps) and the running of a server until a signal stops it (``hosting``).

It sits at the top, with the CLI and the config layer (it loads crew folders and drives
kickoffs), so it may import every layer of crew. The SDKs it speaks (mcp, a2a, starlette,
uvicorn) are imported only by the modules that use them, which load only when a server starts:
``import crew`` never imports them.
"""
