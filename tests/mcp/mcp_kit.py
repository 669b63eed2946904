"""Shared pieces of the MCP tests: a demo server built on the official SDK, the process table,
and a local HTTP server on 127.0.0.1 for the HTTP transports."""

import base64
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40).decode()


def demo_server(name: str = "demo", calls: list[tuple[str, dict[str, Any]]] | None = None) -> Any:
    """An SDK server with tools covering the result shapes: text, structured, image, isError."""
    from mcp.server.mcpserver import MCPServer as SDKServer
    from mcp.server.mcpserver.utilities.types import Image
    from mcp_types import ToolAnnotations

    server = SDKServer(name)
    seen = calls if calls is not None else []

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True, idempotentHint=True))
    def add(a: int, b: int = 2) -> int:
        """Add two integers."""
        seen.append(("add", {"a": a, "b": b}))
        return a + b

    @server.tool()
    def search(query: str, limit: int | None = None, tags: list[str] | None = None) -> str:
        """Search the catalogue."""
        seen.append(("search", {"query": query, "limit": limit, "tags": tags}))
        return f"results for {query}"

    @server.tool(annotations=ToolAnnotations(destructiveHint=True))
    def explode(reason: str) -> str:
        """Always fails."""
        raise ValueError(f"exploded: {reason}")

    @server.tool()
    def picture(size: int) -> Image:
        """Draw a picture."""
        return Image(data=base64.b64decode(PNG), format="png")

    return server


def bare_listing(target: Any) -> list[dict[str, Any]]:
    """tools/list through the bare SDK client: name, description, inputSchema, annotations."""
    import asyncio

    from mcp import Client

    async def listing() -> list[dict[str, Any]]:
        async with Client(target) as client:
            result = await client.list_tools()
            return [tool.model_dump(by_alias=True, exclude_none=True) for tool in result.tools]

    return asyncio.run(listing())


# -- the process table ------------------------------------------------------------------


def descendants(root: int | None = None) -> list[tuple[int, str]]:
    """(pid, command line) of every live process below ``root`` (default: this one)."""
    root = os.getpid() if root is None else root
    try:
        import psutil
    except ImportError:
        return _proc_descendants(root)
    try:
        children = psutil.Process(root).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    out = []
    for child in children:
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                out.append((child.pid, " ".join(child.cmdline())))
        except psutil.NoSuchProcess:
            pass
    return out


def _proc_descendants(root: int) -> list[tuple[int, str]]:
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            state, ppid = stat.rsplit(")", 1)[1].split()[:2]
            if state == "Z":
                continue
            parents[int(entry)] = int(ppid)
            commands[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        except (OSError, ValueError, IndexError):
            continue
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent:
                found.append((pid, commands.get(pid, "")))
                frontier.append(pid)
    return found


def anywhere(marker: str) -> list[int]:
    """Every live process on the machine whose command line contains ``marker`` (orphans included)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue
        if state != "Z" and marker in command:
            found.append(int(entry))
    return found


def servers_running(marker: str = "mcp-server-time") -> list[tuple[int, str]]:
    return [(pid, cmd) for pid, cmd in descendants() if marker in cmd]


def wait_until(check: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


# -- a local HTTP server ----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Run an ASGI app under uvicorn in a thread on 127.0.0.1; yields its base URL."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        if not wait_until(lambda: server.started, 15):
            raise RuntimeError("uvicorn did not start")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def require_token(app: Any, token: str) -> Any:
    """ASGI middleware: 401 unless ``Authorization: Bearer <token>`` is sent."""

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await app(scope, receive, send)

    return guarded
