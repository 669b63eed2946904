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

What a Python program needs to serve crews from its own app is here, each name loaded when it
is first looked up (``from crew.serve import serve_crew, Kickoffs, build_mcp_server``): importing
``crew.serve`` imports none of the SDKs; ``build_mcp_server`` imports mcp, ``HttpApi``
starlette, ``build_a2a_app`` a2a, ``serve_asgi`` uvicorn when it runs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY = {
    # what a served crew is
    "ServedCrew": "crew.serve.served",
    "serve_crew": "crew.serve.served",
    "load_served": "crew.serve.served",
    # the server's kickoffs, shared by every door
    "Kickoffs": "crew.serve.kickoffs",
    # the doors (each imports its SDK when it is looked up)
    "build_mcp_server": "crew.serve.mcp_server",
    "HttpApi": "crew.serve.http_api",
    "build_a2a_app": "crew.serve.a2a_agent",
    # safety and hosting
    "guarded": "crew.serve.guard",
    "server_token": "crew.serve.guard",
    "Bind": "crew.serve.guard",
    "parse_bind": "crew.serve.guard",
    "serve_asgi": "crew.serve.hosting",
    "serve_stdio": "crew.serve.hosting",
}

__all__ = [
    "Bind",
    "HttpApi",
    "Kickoffs",
    "ServedCrew",
    "build_a2a_app",
    "build_mcp_server",
    "guarded",
    "load_served",
    "parse_bind",
    "serve_asgi",
    "serve_crew",
    "serve_stdio",
    "server_token",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'crew.serve' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


if TYPE_CHECKING:
    from crew.serve.a2a_agent import build_a2a_app
    from crew.serve.guard import Bind, guarded, parse_bind, server_token
    from crew.serve.hosting import serve_asgi, serve_stdio
    from crew.serve.http_api import HttpApi
    from crew.serve.kickoffs import Kickoffs
    from crew.serve.mcp_server import build_mcp_server
    from crew.serve.served import ServedCrew, load_served, serve_crew
