"""The one door to the official ``mcp`` SDK: imported on first use, with an install hint when absent.

``import crew`` and ``import crew.mcp`` never load it; opening a server does.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from crew.errors import CrewError

INSTALL_HINT = 'MCP support needs the optional extra: pip install "crew-agents[mcp]" (it installs the official mcp SDK)'

NEEDED = (2, 3)
"""The oldest SDK crew speaks to: 2.x's ``Client`` (1.x has only the lower-level ``ClientSession``)."""

_checked: list[bool] = []


def version_problem(version: str) -> str | None:
    """Why SDK ``version`` cannot serve crew's MCP (with the fix), or None when it can."""
    numbers: list[int] = []
    for part in version.split(".")[:2]:
        digits = "".join(ch for ch in part if ch.isdigit()) if part[:1].isdigit() else ""
        numbers.append(int(digits) if digits else 0)
    if tuple(numbers) >= NEEDED:
        return None
    needed = ".".join(map(str, NEEDED))
    return (
        f"MCP support needs the mcp SDK {needed} or later, and this environment has mcp {version}: "
        f'pip install "mcp>={needed}". If something here pins mcp<2 (crewai 1.x does), crew\'s MCP servers '
        "and that package cannot share one environment: run them in separate environments (docs/mcp.md)"
    )


def load() -> ModuleType:
    """The ``mcp`` package, or a ``CrewError`` saying how to install it (or which version to install)."""
    try:
        import mcp
    except ImportError as exc:
        raise CrewError(f"{INSTALL_HINT} ({exc})") from None
    if not _checked:
        from importlib.metadata import PackageNotFoundError, version

        try:
            problem = version_problem(version("mcp"))
        except PackageNotFoundError:  # an unpackaged checkout: its API decides
            problem = None
        if problem is not None:
            raise CrewError(problem)
        _checked.append(True)
    return mcp


def stdio_transport(command: str, args: list[str], env: dict[str, str], cwd: str | None, errlog: Any) -> Any:
    load()
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from crew.mcp.lifeline import guarded

    command, args = guarded(command, args)
    return stdio_client(StdioServerParameters(command=command, args=args, env=env, cwd=cwd), errlog=errlog)


def http_transport(url: str, headers: dict[str, str], timeout: float) -> Any:
    load()
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    client = create_mcp_http_client(headers=headers or None, timeout=httpx2.Timeout(timeout, read=300.0))
    return _OwnedClient(streamable_http_client(url, http_client=client), client)


def sse_transport(url: str, headers: dict[str, str], timeout: float) -> Any:
    load()
    from mcp.client.sse import sse_client

    return sse_client(url, headers=headers or None, timeout=timeout)


def client(target: Any) -> Any:
    """An SDK ``Client`` over a transport, or in process over an SDK server object."""
    mcp = load()
    return mcp.Client(target, cache=None)


class _OwnedClient:
    """A streamable-HTTP transport that also closes the HTTP client we made for it (the SDK leaves
    a client it was given open)."""

    def __init__(self, transport: Any, http: Any) -> None:
        self.transport, self.http = transport, http

    async def __aenter__(self) -> Any:
        return await self.transport.__aenter__()

    async def __aexit__(self, *exc: Any) -> Any:
        try:
            return await self.transport.__aexit__(*exc)
        finally:
            await self.http.aclose()
