"""Running a server until it is told to stop: stdio, or an ASGI app under uvicorn.

SIGTERM and Ctrl-C stop a server the same way: every running kickoff is cancelled and
waited for (the store marks each run interrupted; ``crew resume RUN`` continues it), then
the server closes its transport and the process exits 0. uvicorn's own signal handling is
kept (it stops accepting, closes connections), without its re-raising of the signal after
shutdown, which would end the process as killed rather than as stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from crew.serve.guard import Bind
from crew.serve.kickoffs import Kickoffs

__all__ = ["serve_asgi", "serve_stdio"]

_STOPPING = (signal.SIGTERM, signal.SIGINT)


async def serve_stdio(run: Callable[[], Awaitable[None]], kickoffs: Kickoffs) -> None:
    """Run ``run()`` (the MCP server on stdin/stdout) until the client leaves or a signal stops it."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()

    def on_signal() -> None:
        stop.set()

    installed = _install(loop, on_signal)
    serving = asyncio.ensure_future(run())
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait([serving, stopping], return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped = await kickoffs.cancel_all()
        if stopped:
            print(f"crew serve: stopped {stopped} running kickoff(s), recorded as interrupted", file=sys.stderr)
        _uninstall(loop, installed)
    if stop.is_set():
        # The SDK reads stdin in a worker thread that no cancellation reaches: waiting for it
        # would keep a stopped server alive. Every run is recorded by now; leave at once.
        sys.stderr.flush()
        os._exit(0)
    stopping.cancel()
    if not serving.cancelled() and serving.exception() is not None:
        raise serving.exception()  # type: ignore[misc]


async def serve_asgi(app: Any, bind: Bind, kickoffs: Kickoffs, *, announce: str) -> None:
    """Serve ``app`` on ``bind`` under uvicorn until a signal stops it; running kickoffs are interrupted first."""
    import uvicorn

    class _Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            loop.call_soon_threadsafe(lambda: asyncio.ensure_future(_interrupt()))

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            saved = {sig: signal.signal(sig, self.handle_exit) for sig in _STOPPING}
            try:
                yield
            finally:
                for sig, handler in saved.items():
                    signal.signal(sig, handler)

    async def _interrupt() -> None:
        stopped = await kickoffs.cancel_all()
        if stopped:
            print(f"crew serve: stopped {stopped} running kickoff(s), recorded as interrupted", file=sys.stderr)

    loop = asyncio.get_running_loop()
    config = uvicorn.Config(
        app,
        host=bind.host,
        port=bind.port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=5,
        access_log=False,
    )
    server = _Server(config)
    print(announce, file=sys.stderr, flush=True)
    await server.serve()
    await kickoffs.cancel_all()


def _install(loop: asyncio.AbstractEventLoop, handler: Callable[[], None]) -> list[signal.Signals]:
    installed = []
    for sig in _STOPPING:
        try:
            loop.add_signal_handler(sig, handler)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no such support
            continue
    return installed


def _uninstall(loop: asyncio.AbstractEventLoop, installed: list[signal.Signals]) -> None:
    for sig in installed:
        loop.remove_signal_handler(sig)
