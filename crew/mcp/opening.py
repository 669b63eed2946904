"""Opening the MCP servers a run needs, once, and closing them when it ends.

``open_servers(agents)`` is the whole contract between a run and MCP: every distinct
server of the given agents is opened (concurrently) before the body runs, so start-up
failures surface before any model call, and each is given back when the body ends —
normally, by an exception, or by cancellation. Opens are counted, so a server the
caller opened, or that a concurrent run shares, stays open.

Each server's opening is announced as an ``mcp.start`` event (its name, transport, when
it began, how long it took, how many tools it offers, or why it failed): the run store
records it, and the timeline's start-up row draws it, so the seconds before the first
task have names.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

from crew.common.events import bus
from crew.errors import ConfigError

__all__ = ["agent_tools", "open_servers", "servers_of"]


def servers_of(agents: Iterable[Any]) -> list[Any]:
    """The distinct servers of ``agents`` (by identity), in first-seen order."""
    seen: dict[int, Any] = {}
    for agent in agents:
        for server in getattr(agent, "mcp", None) or ():
            seen.setdefault(id(server), server)
    return list(seen.values())


@asynccontextmanager
async def open_servers(agents: Iterable[Any]) -> AsyncIterator[list[Any]]:
    """Open every server of ``agents`` for the body; a clash of tool names is a ``ConfigError``."""
    agents = list(agents)
    servers = servers_of(agents)
    if not servers:
        yield []
        return
    results = await asyncio.gather(*(_announced_open(server) for server in servers), return_exceptions=True)
    opened = [server for server, result in zip(servers, results, strict=True) if result is None]
    try:
        failures = [result for result in results if isinstance(result, BaseException)]
        if failures:
            raise failures[0]
        for agent in agents:
            agent_tools(agent)  # the clash check, before anything runs
        yield servers
    finally:
        await asyncio.shield(asyncio.gather(*(server.aclose() for server in opened), return_exceptions=True))


async def _announced_open(server: Any) -> None:
    """``server.aopen()``, then an ``mcp.start`` event saying how it went (also when it failed).

    Joining a connection already open (an agent's run inside a kickoff that opened its
    servers) starts nothing, so it says nothing.
    """
    if server.is_open:
        await server.aopen()
        return
    began, clock = time.time(), time.perf_counter()
    error: str | None = None
    try:
        await server.aopen()
    except BaseException as exc:
        error = str(exc) or type(exc).__name__
        raise
    finally:
        bus.emit(
            "mcp.start",
            server=server.name,
            transport=server.transport,
            started_at=began,
            duration=round(time.perf_counter() - clock, 4),
            tools=0 if error is not None else len(server.tools),
            error=error,
        )


def agent_tools(agent: Any) -> list[Any]:
    """The MCP tools an agent gets from its (open) servers; two sources offering one name is a ``ConfigError``."""
    servers = getattr(agent, "mcp", None) or ()
    if not servers:
        return []
    owner: dict[str, str] = {tool.tool_name: "its own tools" for tool in getattr(agent, "tools", ())}
    tools: list[Any] = []
    for server in servers:
        for tool in server.tools:
            where = owner.get(tool.tool_name)
            if where is not None:
                raise ConfigError(
                    f"agent '{getattr(agent, 'name', None) or agent.role}' gets a tool named '{tool.tool_name}' "
                    f"from MCP server '{server.name}' and from {where}: give a server a prefix "
                    f"(prefix=... / `prefix:` in YAML) so the names differ"
                )
            owner[tool.tool_name] = f"MCP server '{server.name}'"
            tools.append(tool)
    return tools
