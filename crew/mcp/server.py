"""``MCPServer``: an MCP server (stdio, streamable HTTP, SSE, or in process) as a source of crew tools.

A server is configuration until it is opened. Opening starts the process or connects,
does the handshake and lists the tools once; closing stops the process. Opens are
counted: a kickoff opens the servers its agents need and closes them when it ends, but a
server the caller opened (``with server:``), or that another run still uses, stays open.

A connection lives in one asyncio task of its own (the *owner*), on the loop that
opened it, or on a background loop thread for ``with server:`` in sync code. Keeping the
SDK's task groups inside that task means a server that dies cannot cancel the run that
uses it; its calls just fail. Calls from the owner's loop go straight to the SDK client;
calls from any other loop or thread are handed to the owner's loop.

A connection lives no longer than its loop, so runs share one only when it outlives them
all: runs on one loop share that loop's, and every run shares the one opened from sync
code (its loop lives as long as the process). A run on a loop of its own (a sync
``kickoff()`` in a web server's worker thread) otherwise gets a connection of its own:
sharing the first run's would end with that run's loop, in the middle of the other runs.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit

from crew.common.blocking import running_loop
from crew.common.secrets import public_url
from crew.errors import CrewError, ToolException
from crew.mcp import sdk
from crew.mcp.connection import (
    Connection,
    background_loop,
    connection_lost,
    describe,
    retrieve,
    running_background_loop,
)
from crew.mcp.owner import Owner, Transport
from crew.mcp.tool import MCPTool

__all__ = ["MCPServer"]

DEFAULT_CALL_TIMEOUT = 300.0
"""Seconds one tool call may take before the model is told it did not answer: a server that
never answers must not hang the run."""


class MCPServer(Owner):
    """One MCP server: how to reach it, and which of its tools an agent gets, under which names.

    Build one with ``MCPServer.stdio(command, args=...)``, ``MCPServer.http(url)``,
    ``MCPServer.sse(url)`` or ``MCPServer.in_process(sdk_server)``. ``prefix="fs"`` names
    the tools ``fs_<name>``; ``tool_filter`` keeps only the listed tools (the server's own
    names); ``timeout`` bounds start-up and handshake, in seconds, and ``call_timeout``
    (default ``DEFAULT_CALL_TIMEOUT``, 300 s) every tool call; ``cache_function``
    applies to every tool of the server (e.g. ``never_cache`` for a server with side
    effects), and a tool's own can be set on the objects ``list_tools()`` returns.
    ``approve_destructive=True`` makes every tool the server marks ``destructiveHint: true``
    require a person's approval of each call (docs/approvals.md).
    """

    __crew_mcp_server__ = True  # how Agent recognises a server in ``tools=[...]`` without importing this module

    def __init__(
        self,
        transport: Transport,
        *,
        command: str | None = None,
        args: Sequence[str] = (),
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        url: str | None = None,
        headers: dict[str, str] | None = None,
        target: Any = None,
        name: str | None = None,
        tool_filter: Iterable[str] | None = None,
        prefix: str | None = None,
        timeout: float = 30.0,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        cache_function: Callable[[dict[str, Any], Any], bool] | None = None,
        approve_destructive: bool = False,
    ) -> None:
        _check_reach(transport, command, url)
        _check_options(tool_filter, prefix, timeout=timeout, call_timeout=call_timeout)
        self.transport: Transport = transport
        self.command = command
        self.args = [str(a) for a in args]
        self.env = dict(env or {})
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self.url = url
        self.headers = dict(headers or {})
        self.target = target
        self.tool_filter = list(tool_filter) if tool_filter is not None else None
        self.prefix = prefix
        self.timeout = float(timeout)
        self.call_timeout = float(call_timeout)
        self.cache_function = cache_function
        self.approve_destructive = bool(approve_destructive)
        self.name = name or self._default_name()
        self._lock = threading.Lock()
        self._conns: dict[asyncio.AbstractEventLoop, Connection] = {}
        """The open connections by the loop that owns each (see the module's docstring)."""

    # -- constructors ----------------------------------------------------------------------

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] | None = None,
        *,
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        tool_filter: Iterable[str] | None = None,
        prefix: str | None = None,
        timeout: float = 30.0,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        name: str | None = None,
        cache_function: Callable[[dict[str, Any], Any], bool] | None = None,
        approve_destructive: bool = False,
    ) -> MCPServer:
        """A server run as a subprocess speaking MCP on stdin/stdout.

        It inherits this process's environment, with ``env`` added on top.
        """
        return cls(
            "stdio",
            command=command,
            args=args or (),
            env=env,
            cwd=cwd,
            tool_filter=tool_filter,
            prefix=prefix,
            timeout=timeout,
            call_timeout=call_timeout,
            name=name,
            cache_function=cache_function,
            approve_destructive=approve_destructive,
        )

    @classmethod
    def http(cls, url: str, *, headers: dict[str, str] | None = None, **options: Any) -> MCPServer:
        """A server reached over streamable HTTP (the current MCP transport)."""
        return cls("http", url=url, headers=headers, **options)

    @classmethod
    def sse(cls, url: str, *, headers: dict[str, str] | None = None, **options: Any) -> MCPServer:
        """A server reached over the older HTTP+SSE transport."""
        return cls("sse", url=url, headers=headers, **options)

    @classmethod
    def in_process(cls, server: Any, **options: Any) -> MCPServer:
        """An SDK server object (``mcp.server.mcpserver.MCPServer``) served in this process: for tests."""
        options.setdefault("name", getattr(server, "name", None) or "in-process")
        return cls("in_process", target=server, **options)

    # -- facts --------------------------------------------------------------------------

    @property
    def label(self) -> str:
        """How messages name the server."""
        return self.name

    @property
    def where(self) -> str:
        """The command line or URL (without user:password or query) that reaches the server."""
        if self.transport == "stdio":
            return shlex.join([self.command or "", *self.args])
        if self.transport in ("http", "sse"):
            return public_url(self.url or "")
        return f"in-process server {self.name!r}"

    @property
    def is_open(self) -> bool:
        with self._lock:
            return any(conn.started and conn.dead is None for conn in self._conns.values())

    def __repr__(self) -> str:
        return f"MCPServer.{self.transport}({self.where!r}, name={self.name!r})"

    def __copy__(self) -> MCPServer:
        return self  # a server is one shared resource: copies of an agent (or a tool) share its connection

    def __deepcopy__(self, memo: dict[int, Any]) -> MCPServer:
        return self

    def command_problem(self) -> str | None:
        """Why the stdio command cannot run (not found, not executable), checked without starting it."""
        if self.transport != "stdio" or not self.command:
            return None
        command = self.command
        if os.sep in command or (os.altsep and os.altsep in command):
            path = command if os.path.isabs(command) or self.cwd is None else os.path.join(self.cwd, command)
            if not os.path.exists(path):
                return f"command '{command}' does not exist"
            if os.path.isdir(path) or not os.access(path, os.X_OK):
                return f"command '{command}' is not executable"
            return None
        if shutil.which(command) is None:
            return f"command '{command}' was not found on PATH"
        return None

    # -- opening and closing ----------------------------------------------------------------

    def __enter__(self) -> MCPServer:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> MCPServer:
        await self.aopen()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def open(self) -> None:
        """Start (or join) the connection from sync code; it runs on a background loop thread."""
        asyncio.run_coroutine_threadsafe(self.aopen(), background_loop()).result()

    def close(self) -> None:
        """Give back one open; the last one stops the server."""
        asyncio.run_coroutine_threadsafe(self.aclose(), background_loop()).result()

    async def aopen(self) -> None:
        """Start the server (or join a connection already open) and list its tools.

        Raises ``MCPStartupError`` naming the command or URL, with the server's stderr,
        when it cannot start, exits, or does not answer the handshake within ``timeout``.
        """
        sdk.load()  # without the extra: say how to install it, before anything starts
        loop = asyncio.get_running_loop()
        with self._lock:
            for gone in [owner for owner in self._conns if owner.is_closed()]:
                del self._conns[gone]  # opened on a loop that ended without closing it: nothing runs there
            conn = self._joinable(loop)
            starting = conn is None
            if conn is None:
                conn = self._conns[loop] = Connection(loop)
            conn.users += 1
        try:
            if starting:
                conn.task = loop.create_task(self._own(conn), name=f"mcp:{self.name}")
                waiter = asyncio.wrap_future(conn.ready)
                waiter.add_done_callback(retrieve)  # after a timeout nobody else reads its outcome
                try:
                    await asyncio.wait_for(asyncio.shield(waiter), self.timeout)
                except TimeoutError:
                    raise self._startup_error(
                        f"did not complete the MCP handshake within {self.timeout:g} s", conn
                    ) from None
            else:
                await asyncio.shield(asyncio.wrap_future(conn.ready))
        except BaseException:
            await self._release(conn)
            raise

    async def aclose(self) -> None:
        """Give back the open this loop made; the last one of a connection stops it."""
        with self._lock:
            conn = self._joinable(asyncio.get_running_loop())
        if conn is not None:
            await self._release(conn)

    def _joinable(self, loop: asyncio.AbstractEventLoop | None) -> Connection | None:
        """The connection a caller on ``loop`` uses: its loop's own, else the one opened from sync code."""
        conn = self._conns.get(loop) if loop is not None else None
        if conn is None:
            shared = running_background_loop()
            conn = self._conns.get(shared) if shared is not None else None
        return conn

    async def _release(self, conn: Connection) -> None:
        with self._lock:
            if conn.users == 0:
                return
            conn.users -= 1
            if conn.users > 0:
                return
            if self._conns.get(conn.loop) is conn:
                del self._conns[conn.loop]
        await conn.shutdown()

    # -- tools ------------------------------------------------------------------------------

    @property
    def tools(self) -> list[MCPTool]:
        """The tools listed when the server was opened (after ``prefix`` and ``tool_filter``)."""
        conn = self._serving(running_loop())
        if conn is None or not conn.started:
            raise CrewError(
                f"MCP server '{self.name}' is not open: use `with server:` / `async with server:`, "
                "or give it to an agent and let the kickoff open it"
            )
        return list(conn.tools)

    def list_tools(self) -> list[MCPTool]:
        """The server's tools as crew tools (the server must be open)."""
        return self.tools

    async def alist_tools(self) -> list[MCPTool]:
        return self.tools

    # -- calls --------------------------------------------------------------------------------

    async def acall(self, name: str, arguments: dict[str, Any]) -> Any:
        """Call tool ``name`` (the server's name for it); any failure is a ``ToolException`` naming the server."""
        running = asyncio.get_running_loop()
        conn = self._live(running)
        if running is conn.loop:
            return await self._call(conn, name, arguments)
        future = asyncio.run_coroutine_threadsafe(self._call(conn, name, arguments), conn.loop)
        return await asyncio.wrap_future(future)

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """The sync twin of ``acall``, for sync callers on any thread but the owner loop's."""
        running = running_loop()
        conn = self._live(running)
        if running is conn.loop:
            raise ToolException(
                f"MCP server '{self.name}': a sync call from its own event loop would block it; use the async path"
            )
        return asyncio.run_coroutine_threadsafe(self._call(conn, name, arguments), conn.loop).result()

    def _serving(self, loop: asyncio.AbstractEventLoop | None) -> Connection | None:
        """The connection that serves a caller on ``loop`` (None: a thread with no loop): the one it
        would join, else any open one (a worker thread of a run reaches its run's connection)."""
        with self._lock:
            conn = self._joinable(loop)
            if conn is None:
                conn = next((c for c in self._conns.values() if c.started and c.dead is None), None)
            return conn

    def _live(self, loop: asyncio.AbstractEventLoop | None) -> Connection:
        conn = self._serving(loop)
        if conn is None or not conn.started:
            raise ToolException(f"MCP server '{self.name}' is not open, so its tools cannot be called")
        if conn.dead is not None:
            raise ToolException(f"MCP server '{self.name}' is no longer available ({conn.dead})")
        return conn

    async def _call(self, conn: Connection, name: str, arguments: dict[str, Any]) -> Any:
        try:
            async with asyncio.timeout(self.call_timeout):  # no task of its own, unlike wait_for
                return await conn.client.call_tool(name, arguments)
        except TimeoutError:
            raise ToolException(
                f"MCP server '{self.name}' did not answer tool '{name}' within {self.call_timeout:g} s "
                "(its call_timeout)"
            ) from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the server's failure is the model's observation, not a crash
            if conn.dead is None and connection_lost(exc):
                conn.dead = "the connection was lost"
            reason = describe(exc)
            raise ToolException(f"MCP server '{self.name}' failed on tool '{name}': {reason}") from None

    def _default_name(self) -> str:
        if self.transport == "stdio":
            return os.path.basename(self.command or "") or "server"
        if self.transport in ("http", "sse"):
            return urlsplit(self.url or "").hostname or "server"
        return "in-process"


def _check_reach(transport: Transport, command: str | None, url: str | None) -> None:
    """A server needs what reaches it: a command for stdio, a url over HTTP."""
    if transport == "stdio" and (not isinstance(command, str) or not command.strip()):
        raise CrewError("MCPServer.stdio needs a command (the program that runs the server)")
    if transport in ("http", "sse") and (not isinstance(url, str) or not url.strip()):
        raise CrewError(f"MCPServer.{transport} needs a url")


def _check_options(tool_filter: Iterable[str] | None, prefix: str | None, **seconds: float) -> None:
    if isinstance(tool_filter, str):
        raise CrewError("tool_filter is a list of tool names, not one string")
    for option, value in seconds.items():
        if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
            raise CrewError(f"{option} must be a positive number of seconds, got {value!r}")
    if prefix is not None and (not isinstance(prefix, str) or not prefix.strip()):
        raise CrewError("prefix must be a non-empty string")
