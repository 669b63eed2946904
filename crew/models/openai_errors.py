"""The native transport's failures: what the retry policy and the user read.

HTTP error answers become exceptions carrying ``status_code`` and the response headers
(all the retry policy reads), with the server's own message and what it means for this
call: which key was refused, which model was not found, where. A reply larger than any
model sends is cut off (``MAX_REPLY_BYTES``), so a broken server cannot fill memory.
"""

from __future__ import annotations

import json

import httpx

from crew.models.failures import shorten
from crew.models.transport import Endpoint

__all__ = [
    "MAX_REPLY_BYTES",
    "APIConnectionError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "InternalServerError",
    "MissingKeyError",
    "NotFoundError",
    "PermissionDeniedError",
    "ProviderError",
    "RateLimitError",
    "ReplyTooLargeError",
    "aread_body",
    "http_error",
    "read_body",
    "server_message",
    "too_large",
    "transport_error",
]


class ProviderError(Exception):
    """An HTTP error answer of the server; ``status_code`` and ``headers`` feed the retry policy."""

    def __init__(self, message: str, status_code: int, headers: httpx.Headers | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.headers = headers


class BadRequestError(ProviderError):
    pass


class AuthenticationError(ProviderError):
    pass


class PermissionDeniedError(ProviderError):
    pass


class NotFoundError(ProviderError):
    pass


class RateLimitError(ProviderError):
    pass


class InternalServerError(ProviderError):
    pass


class APIConnectionError(ConnectionError):
    """The server could not be reached, or the connection broke mid-answer (retried)."""


class APITimeoutError(TimeoutError):
    """An attempt outlived ``LLM.timeout`` (retried)."""


class MissingKeyError(Exception):
    """No API key for OpenAI's own endpoint: refused before sending, never retried."""


_KINDS: dict[int, type[ProviderError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    422: BadRequestError,
    429: RateLimitError,
}


def http_error(status: int, body: bytes, headers: httpx.Headers, point: Endpoint) -> ProviderError:
    """The server's own message, with what it means for this call (which key, which model, where)."""
    message = server_message(body) or f"HTTP {status}"
    if status == 401:
        message += f" (the API key from {point.key_source} was refused by {point.base_url})"
    elif status == 404:
        message += f" (model {point.wire_model!r} at {point.base_url})"
    kind = _KINDS.get(status, InternalServerError if status >= 500 else ProviderError)
    return kind(message, status, headers)


def server_message(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return shorten(text, 300)
    if isinstance(data, dict):
        error = data.get("error", data.get("detail", data.get("message")))
        if isinstance(error, dict):
            error = error.get("message") or json.dumps(error)
        if error is not None:
            return str(error)
    return shorten(text, 300)


def transport_error(exc: httpx.TransportError, point: Endpoint) -> Exception:
    if isinstance(exc, httpx.TimeoutException):
        return APITimeoutError(f"no answer from {point.base_url} in time ({type(exc).__name__})")
    return APIConnectionError(f"{point.base_url}: {type(exc).__name__}: {exc}".rstrip(": "))


# -- a reply's size -----------------------------------------------------------------

MAX_REPLY_BYTES = 64 * 1024 * 1024
"""The most one reply may hold (its body, or a stream's lines together): a broken server or
proxy streaming without end must fail the call, not fill the process's memory."""


class ReplyTooLargeError(Exception):
    """A reply past ``MAX_REPLY_BYTES``; not retried (the same server would send it again)."""


def too_large(point: Endpoint) -> ReplyTooLargeError:
    limit = MAX_REPLY_BYTES / 1024 / 1024
    return ReplyTooLargeError(f"the reply from {point.base_url} passed {limit:g} MB; it was cut off there")


def _declared_too_large(response: httpx.Response) -> bool:
    declared = response.headers.get("content-length", "")
    return declared.isdigit() and int(declared) > MAX_REPLY_BYTES


async def aread_body(response: httpx.Response, point: Endpoint) -> bytes:
    """The body, read up to ``MAX_REPLY_BYTES``."""
    if _declared_too_large(response):
        raise too_large(point)
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise too_large(point)
        chunks.append(chunk)
    return b"".join(chunks)


def read_body(response: httpx.Response, point: Endpoint) -> bytes:
    """The sync twin of :func:`aread_body`."""
    if _declared_too_large(response):
        raise too_large(point)
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise too_large(point)
        chunks.append(chunk)
    return b"".join(chunks)
