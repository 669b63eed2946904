"""Safe by default: where a server may listen, and the token every HTTP request must carry.

``crew serve`` binds 127.0.0.1 unless told otherwise. Any other address is reachable by
someone else, so it needs a token (``--token`` or ``$CREW_SERVE_TOKEN``); without one the
command refuses to start. With a token, every HTTP request of every mode must carry
``Authorization: Bearer TOKEN`` (compared in constant time), and a body announced larger
than the cap is refused before it is read. The token is registered as a secret, so it is
masked in every log line, error and response.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["MAX_BODY_BYTES", "Bind", "guarded", "parse_bind", "server_token"]

MAX_BODY_BYTES = 1024 * 1024
"""The largest request body a server reads (an MCP message, a kickoff's inputs, an A2A message)."""

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class Bind:
    """A ``HOST:PORT`` to listen on (``:PORT`` or ``PORT``: 127.0.0.1)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False  # a name: it may resolve anywhere

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def parse_bind(text: str, option: str) -> Bind:
    """``HOST:PORT``, ``[IPv6]:PORT``, ``:PORT`` or ``PORT``; ``ValueError`` naming the option otherwise."""
    value = text.strip()
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "", value
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{option} {text!r}: expected HOST:PORT (e.g. 127.0.0.1:8000), the port a number 0-65535")
    return Bind(host, int(port))


def server_token(given: str | None) -> str | None:
    """``--token``, else ``$CREW_SERVE_TOKEN``, else None; registered as a secret (masked wherever it would show)."""
    from crew.common.secrets import register

    token = (given or os.environ.get("CREW_SERVE_TOKEN", "")).strip() or None
    if token is not None:
        register(token)
    return token


def guarded(app: ASGIApp, token: str | None, *, max_body: int = MAX_BODY_BYTES) -> ASGIApp:
    """``app`` behind the token check and the body cap (ASGI middleware)."""
    expected = f"Bearer {token}".encode() if token is not None else None

    async def guard(
        scope: Scope, receive: Callable[[], Awaitable[Any]], send: Callable[[Any], Awaitable[None]]
    ) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if expected is not None and not hmac.compare_digest(headers.get(b"authorization", b""), expected):
            await _refuse(send, 401, "unauthorized: send the server's token as 'Authorization: Bearer TOKEN'")
            return
        length = headers.get(b"content-length", b"0").strip()
        if not length.isdigit() or int(length) > max_body:
            await _refuse(send, 413, f"the request body is over the limit of {max_body:,} bytes")
            return
        await app(scope, receive, send)  # a body sent without its length: each app caps what it reads

    return guard


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="crew"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
