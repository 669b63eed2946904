"""Starting servers outside a run: ``crew validate --check-servers`` and ``crew tools``.

Both open every server at once (so the slowest start-up bounds the wait, not the sum)
and close them before returning.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from crew.mcp.server import MCPServer

__all__ = ["check_servers", "server_tools"]


def check_servers(servers: Sequence[MCPServer]) -> dict[str, str]:
    """Start each server and stop it again: server name -> start-up problem, for the ones that failed."""

    async def one(server: MCPServer) -> str | None:
        try:
            async with server:
                return None
        except Exception as exc:  # noqa: BLE001 - every failure is reported, none stops the others
            return str(exc)

    async def every() -> list[str | None]:
        return list(await asyncio.gather(*(one(server) for server in servers)))

    results = asyncio.run(every())
    return {server.name: problem for server, problem in zip(servers, results, strict=True) if problem is not None}


def server_tools(servers: Sequence[MCPServer]) -> dict[str, list[Any]]:
    """Each server's tools, as an agent would get them; a server that fails raises its start-up error."""

    async def every() -> dict[str, list[Any]]:
        async with contextlib.AsyncExitStack() as stack:
            await asyncio.gather(*(stack.enter_async_context(server) for server in servers))
            return {server.name: server.tools for server in servers}

    return asyncio.run(every())
