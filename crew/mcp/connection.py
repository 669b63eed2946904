"""One open MCP connection and the pieces around it: its owner task's state, the loop thread
that owns connections opened from sync code, and reading the SDK's (grouped) exceptions.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from typing import Any

from crew.common.blocking import running_loop
from crew.mcp.tool import MCPTool

__all__ = [
    "Connection",
    "background_loop",
    "connection_lost",
    "describe",
    "innermost",
    "list_all",
    "retrieve",
    "running_background_loop",
]

_STDERR_TAIL = 2000


class Connection:
    """One open connection: its loop and owner task, the SDK client, the listed tools, its fate."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.ready: Future[None] = Future()
        self.done: Future[None] = Future()
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.client: Any = None
        self.tools: list[MCPTool] = []
        self.users = 0  # opens not given back yet (the server's lock guards it)
        self.started = False  # the handshake and the listing succeeded
        self.dead: str | None = None
        self.stderr: Any = None
        self._stderr_text = ""

    async def shutdown(self) -> None:
        """Stop the owner task (which stops the process) and wait until it has."""

        def stop() -> None:
            self.stop.set()
            if not self.ready.done() and self.task is not None:
                self.task.cancel()  # stuck in the handshake: cancelling is the only way out

        if running_loop() is self.loop:
            stop()
        else:
            try:
                self.loop.call_soon_threadsafe(stop)
            except RuntimeError:  # that loop is closed: its tasks, and the process with them, are gone
                return
        await asyncio.shield(asyncio.wrap_future(self.done))

    def stderr_tail(self) -> str:
        if self.stderr is not None and not self.stderr.closed:
            try:
                self.stderr.flush()
                self.stderr.seek(0)
                self._stderr_text = self.stderr.read()[-_STDERR_TAIL:]
            except (OSError, ValueError):
                pass
        return self._stderr_text.strip()

    def close_stderr(self) -> None:
        if self.stderr is not None:
            self.stderr_tail()
            self.stderr.close()


async def list_all(client: Any) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    for _page in range(1000):  # a server that pages forever must not hang the run
        result = await client.list_tools(cursor=cursor)
        tools.extend(result.tools)
        cursor = getattr(result, "next_cursor", None)
        if not cursor:
            break
    return tools


def retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def innermost(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups: anyio wraps everything in them."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    leaf = innermost(exc)
    text = str(leaf)
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__


def connection_lost(exc: BaseException) -> bool:
    leaf = innermost(exc)
    name = type(leaf).__name__
    text = str(leaf).lower()
    return (
        name in ("ClosedResourceError", "BrokenResourceError", "EndOfStream")
        or isinstance(leaf, ConnectionError | EOFError | BrokenPipeError)
        or "connection closed" in text
    )


_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def background_loop() -> asyncio.AbstractEventLoop:
    """The loop thread that owns servers opened from sync code (``with server:``)."""
    global _loop
    with _loop_lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="crew-mcp", daemon=True).start()
            _loop = loop
        return _loop


def running_background_loop() -> asyncio.AbstractEventLoop | None:
    """The background loop if it was started (and still runs), without starting it."""
    loop = _loop
    return loop if loop is not None and not loop.is_closed() else None
