"""The httpx client litellm's OpenAI path sends crew's calls through: a redirect stays on its origin.

litellm builds its OpenAI clients with ``follow_redirects=True``, and httpx, following a 307,
re-sends every header but ``Authorization``: a server that redirects to another host receives
the call's ``extra_headers`` (an ``X-Api-Key``) and body there. litellm reads its HTTP client
for that path from ``litellm.aclient_session``; :func:`install` puts :class:`LoopBoundClient`
there (unless the user already set one), and every response passes :func:`same_origin_only`,
which refuses a redirect to another scheme, host or port before it is followed
(:class:`~crew.errors.RedirectRefused`). A redirect on the same origin is still followed.

An httpx async client belongs to one event loop, while ``aclient_session`` is one value per
process and litellm caches the SDK clients built around it. So the value litellm holds only
stands in: each request goes to the running loop's own client, made on first use and closed
when the loop shuts its async generators down (as ``asyncio.run`` does), the way the native
door keeps its clients. Timeouts are not the client's: litellm gives each request the door's
``timeout``. Providers litellm serves through its own HTTP handler (Anthropic, Gemini...) do
not read ``aclient_session``: for them litellm's redirect policy stands.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
import weakref
from collections.abc import AsyncIterator
from typing import Any

import httpx

from crew.errors import RedirectRefused

__all__ = ["LoopBoundClient", "find_refusal", "install", "same_origin_only"]

_LIMITS = httpx.Limits(max_connections=256, max_keepalive_connections=32)


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    port = url.port if url.port is not None else {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, port


async def same_origin_only(response: httpx.Response) -> None:
    """A response hook: a redirect whose target is another origin raises instead of being followed."""
    if not response.has_redirect_location:
        return
    source = response.request.url
    target = source.join(response.headers["Location"])
    if _origin(target) != _origin(source):
        raise RedirectRefused(
            f"{source.copy_with(query=None)} answered {response.status_code} (a redirect) to "
            f"{target.copy_with(query=None)}, another origin: crew does not follow it, so the call's "
            "headers (the API key, extra_headers) do not go there; if that server is the right one, "
            "set api_base to it"
        )


def find_refusal(exc: BaseException) -> RedirectRefused | None:
    """The :class:`RedirectRefused` that litellm and the openai SDK wrapped into ``exc``, if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, RedirectRefused):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


class _Unused(httpx.AsyncBaseTransport):
    """The stand-in's own transport: never used, so making the stand-in loads no certificates."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raise RuntimeError("LoopBoundClient sends through the running loop's client")


class LoopBoundClient(httpx.AsyncClient):
    """One process-wide client for litellm to hold; each request goes to the running loop's own.

    The SDK builds requests on it (``build_request`` holds no loop state) and sends them
    with ``send``, which is handed to this loop's client. ``aclose`` does nothing: the
    loops' clients close with their loops, and litellm may go on using this one.
    """

    def __init__(self) -> None:
        super().__init__(transport=_Unused(), follow_redirects=True)
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[httpx.AsyncClient, Any]] = (
            weakref.WeakKeyDictionary()
        )

    async def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        client = await self._loop_client()
        return await client.send(request, **kwargs)

    async def aclose(self) -> None:
        return None

    async def _loop_client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        entry = self._loops.get(loop)
        if entry is not None and not entry[0].is_closed:
            return entry[0]
        client = httpx.AsyncClient(
            timeout=None,
            limits=_LIMITS,
            verify=_ssl_context(),
            follow_redirects=True,
            event_hooks={"response": [same_origin_only]},
        )
        closer = _close_with_loop(client)
        await closer.__anext__()  # registers the generator with the loop's shutdown_asyncgens
        self._loops[loop] = (client, closer)  # the loop keeps generators weakly: hold it here
        return client

    def loop_clients(self) -> int:
        """How many loops' clients are open (for tests: a finished loop leaves none)."""
        return sum(1 for client, _ in self._loops.values() if not client.is_closed)


_contexts: list[ssl.SSLContext] = []


def _ssl_context() -> ssl.SSLContext:
    """One context per process: loading the CA bundle (``SSL_CERT_FILE`` if set) costs 30-400 ms,
    which a client per loop would pay at every kickoff and every ``asyncio.run``."""
    with _lock:
        if not _contexts:
            _contexts.append(httpx.create_ssl_context())
        return _contexts[0]


async def _close_with_loop(client: httpx.AsyncClient) -> AsyncIterator[None]:
    try:
        yield
    finally:
        await client.aclose()


_installed: LoopBoundClient | None = None
_lock = threading.Lock()


def install(litellm: Any) -> None:
    """Make ``litellm.aclient_session`` crew's redirect-checking client, unless the user set their own."""
    global _installed
    with _lock:
        if getattr(litellm, "aclient_session", None) is None:
            _installed = _installed or LoopBoundClient()
            litellm.aclient_session = _installed
