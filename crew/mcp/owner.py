"""A server's connection owner: the asyncio task that starts the connection, lists its tools, and
says why a start failed.

``MCPServer`` (``crew.mcp.server``: how to reach a server, opens counted, calls handed to the
right loop) inherits ``Owner``. The owner task keeps the SDK's task groups inside itself, so
a server that dies cannot cancel the run that uses it (see ``crew.mcp.server``'s docstring);
every failure reaches the openers through the connection's futures, as an ``MCPStartupError``
that names the command or URL and carries the server's stderr.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from crew.errors import CrewError, MCPStartupError
from crew.mcp import sdk
from crew.mcp.connection import (
    Connection,
    connection_lost,
    describe,
    innermost,
    list_all,
)
from crew.mcp.tool import MCPTool

__all__ = ["Owner", "Transport"]

Transport = Literal["stdio", "http", "sse", "in_process"]


class Owner:
    """The owner task of a server's connections, and the tools and errors it makes."""

    if TYPE_CHECKING:  # MCPServer's configuration, which the owner reads
        transport: Transport
        name: str
        command: str | None
        args: list[str]
        env: dict[str, str]
        cwd: str | None
        url: str | None
        headers: dict[str, str]
        target: Any
        timeout: float
        tool_filter: list[str] | None
        prefix: str | None
        cache_function: Callable[[dict[str, Any], Any], bool] | None
        approve_destructive: bool

        @property
        def where(self) -> str: ...

        def command_problem(self) -> str | None: ...

    async def _own(self, conn: Connection) -> None:
        try:
            async with sdk.client(self._transport(conn)) as client:
                conn.client = client
                conn.tools = self._build_tools(await list_all(client))
                conn.started = True  # read on every call: a plain flag, not the future's lock
                conn.ready.set_result(None)
                await conn.stop.wait()
        except BaseException as exc:  # every failure is reported through the futures
            if not conn.ready.done():
                conn.ready.set_exception(self._failure(exc, conn))
            elif conn.dead is None and not isinstance(exc, asyncio.CancelledError):
                conn.dead = describe(exc)
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
        finally:
            if conn.dead is None:
                conn.dead = "closed"
            if not conn.ready.done():
                conn.ready.set_exception(self._startup_error("closed during start-up", conn))
            conn.close_stderr()
            if not conn.done.done():
                conn.done.set_result(None)

    def _transport(self, conn: Connection) -> Any:
        if self.transport == "stdio":
            problem = self.command_problem()
            if problem is not None:  # said before the launcher (lifeline) would start it
                raise CrewError(problem)
            conn.stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115 - closed by the owner
            env = {**os.environ, **self.env}
            return sdk.stdio_transport(self.command or "", self.args, env, self.cwd, conn.stderr)
        if self.transport == "http":
            return sdk.http_transport(self.url or "", self.headers, self.timeout)
        if self.transport == "sse":
            return sdk.sse_transport(self.url or "", self.headers, self.timeout)
        return self.target

    def _build_tools(self, listed: list[Any]) -> list[MCPTool]:
        by_name = {tool.name: tool for tool in listed}
        if self.tool_filter is not None:
            missing = [name for name in self.tool_filter if name not in by_name]
            if missing:
                from crew.common.keywords import did_you_mean

                hint = did_you_mean(missing[0], list(by_name))
                raise CrewError(
                    f"tool_filter names {', '.join(map(repr, missing))}, which the server does not offer{hint}; "
                    f"it offers: {', '.join(sorted(by_name)) or 'no tools'}"
                )
            listed = [by_name[name] for name in self.tool_filter]
        return [self._tool(tool) for tool in listed]

    def _tool(self, listed: Any) -> MCPTool:
        annotations = listed.annotations.model_dump(by_alias=True, exclude_none=True) if listed.annotations else {}
        options: dict[str, Any] = {}
        if self.cache_function is not None:
            options["cache_function"] = self.cache_function
        if self.approve_destructive and annotations.get("destructiveHint") is True:
            options["requires_approval"] = True
        description = listed.description or listed.title or f"The '{listed.name}' tool of MCP server '{self.name}'."
        return MCPTool(
            name=f"{self.prefix}_{listed.name}" if self.prefix else listed.name,
            description=description,
            server=self,
            remote_name=listed.name,
            input_schema=dict(listed.input_schema or {"type": "object", "properties": {}}),
            output_schema=listed.output_schema,
            annotations=annotations,
            response_format="content_and_artifact",
            metadata={"mcp_server": self.name},
            **options,
        )

    # -- errors ---------------------------------------------------------------------------------

    def _failure(self, exc: BaseException, conn: Connection) -> BaseException:
        if isinstance(exc, CrewError) and not isinstance(exc, MCPStartupError):
            return self._startup_error(str(exc), conn)
        if isinstance(exc, MCPStartupError):
            return exc
        leaf = innermost(exc)
        if isinstance(leaf, FileNotFoundError) and self.transport == "stdio":
            found = self.command_problem() or f"command '{self.command}' could not be started ({leaf})"
            return self._startup_error(found, conn)
        if isinstance(leaf, asyncio.CancelledError):
            return self._startup_error("start-up was cancelled", conn)
        if self.transport == "stdio" and connection_lost(leaf):
            return self._startup_error("exited during start-up (the connection closed before the handshake)", conn)
        return self._startup_error(f"failed during start-up: {describe(leaf)}", conn)

    def _startup_error(self, problem: str, conn: Connection) -> MCPStartupError:
        stderr = conn.stderr_tail()
        kind = "command" if self.transport == "stdio" else ("url" if self.transport != "in_process" else "server")
        message = f"MCP server '{self.name}' ({kind}: {self.where}) {problem}"
        if stderr:
            message += "\nIts stderr:\n" + "\n".join(f"  {line}" for line in stderr.splitlines())
        return MCPStartupError(message, server=self.name, stderr=stderr)
