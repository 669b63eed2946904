"""Shared pieces of the serve tests: the test crews, one real client held open per module, a served process."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

HERE = Path(__file__).parent
CREWS = HERE / "crews"
REPO = HERE.parents[1]
T = TypeVar("T")


def env() -> dict[str, str]:
    """The environment of a ``crew serve`` child: this checkout's crew first on the path."""
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join([str(REPO), out.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return out


class Held:
    """A client (anything used as ``async with``) held open on an event loop of its own thread.

    The SDK's clients live in anyio task groups, which must be entered and left by one task:
    the module's tests share one connection by handing coroutines to that loop.
    """

    def __init__(self, make: Callable[[], Any]) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.ready = threading.Event()
        self.client: Any = None
        self._stop: asyncio.Event | None = None
        self.holding = asyncio.run_coroutine_threadsafe(self._hold(make), self.loop)
        if not self.ready.wait(60):
            raise RuntimeError("the client did not connect")
        if self.holding.done():
            self.holding.result()

    async def _hold(self, make: Callable[[], Any]) -> None:
        self._stop = asyncio.Event()
        try:
            async with make() as client:
                self.client = client
                self.ready.set()
                await self._stop.wait()
        finally:
            self.ready.set()

    def run(self, use: Callable[[Any], Awaitable[T]], timeout: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(use(self.client), self.loop).result(timeout)

    def submit(self, coro: Awaitable[T]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)  # type: ignore[arg-type]

    def close(self) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        try:
            self.holding.result(30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def served_process(args: list[str], port: int) -> Iterator[subprocess.Popen[str]]:
    """``crew serve ARGS`` as a real process, until its port answers; stopped with SIGTERM at the end."""
    process = subprocess.Popen(
        [sys.executable, "-m", "crew", "serve", *args],
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"crew serve exited {process.returncode}: {process.stderr.read()}")  # type: ignore[union-attr]
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        else:
            raise RuntimeError("crew serve did not listen")
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
