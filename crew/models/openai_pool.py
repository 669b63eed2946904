"""The native door's connections: one keep-alive pool per event loop and endpoint, closed with the loop.

aiohttp, not httpx, carries the async path: httpx 0.28's pool does work per request that
grows with the connections open (2,000 requests at once took an ``httpx.AsyncClient``
5.3 s for 400 where an aiohttp session took 0.66 s for all of them), so a batch of a
thousand kickoffs spent its time in the client. A pool is keyed by origin (scheme, host,
port) and ``max_connections``, so one endpoint's connections are reused by every call of
the loop, and two LLMs asking for different limits each get theirs.

A pool never follows redirects (a cross-origin one would carry the key), keeps no cookies
(a model's server has no session to keep), and, like httpx, takes its proxy and CA bundle
from the environment (``HTTPS_PROXY``, ``NO_PROXY``, ``SSL_CERT_FILE``): read once, when the
pool opens. (aiohttp's own ``trust_env`` reads them, and ``~/.netrc``, in a worker thread at
every request: two thread hops a call, the largest cost of a big batch.)
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import threading
import weakref
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from crew.models.settings import DEFAULT_MAX_CONNECTIONS

if TYPE_CHECKING:
    import aiohttp

__all__ = ["DEFAULT_MAX_CONNECTIONS", "Pool", "pool"]

_KEEPALIVE_S = 30.0
"""How long an idle connection stays open for the next call."""


class Pool:
    """One loop's keep-alive connections to one endpoint: an ``aiohttp.ClientSession`` and its limit."""

    __slots__ = ("max_connections", "proxy", "proxy_auth", "session")

    def __init__(self, session: aiohttp.ClientSession, max_connections: int, url: str) -> None:
        self.session = session
        self.max_connections = max_connections
        self.proxy, self.proxy_auth = _env_proxy(url)

    @property
    def is_closed(self) -> bool:
        return self.session.closed


_Key = tuple[str, str, int | None, int]
_loop_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[_Key, tuple[Pool, Any]]] = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()
_contexts: dict[str, ssl.SSLContext] = {}


def _ssl_context() -> ssl.SSLContext:
    """One context per process, with the trust httpx gives (certifi's bundle, or ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR``): loading a CA bundle costs ~30 ms, which a pool per loop would pay at every kickoff."""
    with _lock:
        context = _contexts.get("https")
        if context is None:
            import httpx  # its trust rules, kept: the sync path and litellm use the same

            context = _contexts["https"] = httpx.create_ssl_context()
        return context


@functools.lru_cache(maxsize=256)
def _key(url: str, max_connections: int) -> _Key:
    parts = urlsplit(url)
    scheme = "https" if parts.scheme.lower() == "https" else "http"
    return scheme, (parts.hostname or "").lower(), parts.port, max_connections


async def pool(url: str, max_connections: int = DEFAULT_MAX_CONNECTIONS) -> Pool:
    """This loop's pool for the URL's endpoint. A parked async generator closes it when the loop
    shuts its generators down (``asyncio.run`` does), so no connection outlives the loop."""
    loop = asyncio.get_running_loop()
    key = _key(url, max_connections)
    held = _loop_pools.get(loop)
    entry = held.get(key) if held is not None else None
    if entry is not None and not entry[0].is_closed:
        return entry[0]
    held = _loop_pools.setdefault(loop, {})
    found = Pool(_session(key[0] == "https", max_connections), max_connections, url)
    closer = _close_with_loop(found, loop, key)
    await closer.__anext__()  # registers the generator with the loop's shutdown_asyncgens
    held[key] = (found, closer)  # the loop keeps generators weakly: hold it here
    return found


def _session(tls: bool, max_connections: int) -> aiohttp.ClientSession:
    import aiohttp

    connector = aiohttp.TCPConnector(
        limit=max_connections,
        limit_per_host=0,  # one pool is one endpoint already
        ssl=_ssl_context() if tls else False,  # a plain-HTTP pool never speaks TLS (pools are per scheme)
        keepalive_timeout=_KEEPALIVE_S,
    )
    return aiohttp.ClientSession(
        connector=connector,
        timeout=aiohttp.ClientTimeout(total=None),  # each call sets its own
        cookie_jar=aiohttp.DummyCookieJar(),
    )


def _env_proxy(url: str) -> tuple[Any, aiohttp.BasicAuth | None]:
    """The proxy the environment names for ``url`` (``HTTP(S)_PROXY`` unless ``NO_PROXY`` covers its host)."""
    from aiohttp.helpers import get_env_proxy_for_url
    from yarl import URL

    try:
        return get_env_proxy_for_url(URL(url))
    except LookupError:
        return None, None


async def _close_with_loop(found: Pool, loop: asyncio.AbstractEventLoop, key: _Key) -> AsyncIterator[None]:
    try:
        yield
    finally:
        try:
            await found.session.close()
        finally:
            _forget(loop, key, found)


def _forget(loop: asyncio.AbstractEventLoop, key: _Key, found: Pool) -> None:
    """The loop's pool let go of once closed.

    The table is weak in its loops, yet a pool's session holds its loop: a loop kept as a
    key stayed alive as long as its pool, so every ``crew.kickoff`` (a loop of its own) left
    its loop, session and connector behind for good (about 30 objects a kickoff).
    """
    held = _loop_pools.get(loop)
    if held is not None and held.get(key, (None, None))[0] is found:
        del held[key]
        if not held:
            _loop_pools.pop(loop, None)
