"""The native transport's failures: what the retry policy and the user read.

HTTP error answers become exceptions carrying ``status_code`` and the response headers
(all the retry policy reads), with the server's own message and what it means for this
call: which key was refused, which model was not found, where. A reply larger than any
model sends is cut off (``MAX_REPLY_BYTES``), so a broken server cannot fill memory.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterable, Mapping
from typing import Any, cast

from crew.common.secrets import public_url
from crew.models.failures import shorten
from crew.models.openai_endpoint import Endpoint

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
    "Reading",
    "ReplyTooLargeError",
    "aread_body",
    "http_error",
    "server_message",
    "shown",
    "too_large",
    "transport_error",
]


class ProviderError(Exception):
    """An HTTP error answer of the server; ``status_code`` and ``headers`` feed the retry policy."""

    def __init__(self, message: str, status_code: int, headers: Mapping[str, Any] | None = None) -> None:
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


def http_error(status: int, body: bytes, headers: Mapping[str, Any], point: Endpoint) -> ProviderError:
    """The server's own message, with what it means for this call (which key, which model, where)."""
    message = server_message(body) or f"HTTP {status}"
    if status == 401:
        message += f" (the API key from {point.key_source} was refused by {shown(point)})"
    elif status == 404:
        message += f" (model {point.wire_model!r} at {shown(point)})"
    kind = _KINDS.get(status, InternalServerError if status >= 500 else ProviderError)
    return kind(message, status, headers)


def server_message(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        data: object = json.loads(text)
    except ValueError:
        return shorten(text, 300)
    if isinstance(data, dict):
        fields = cast("dict[str, object]", data)
        error = fields.get("error", fields.get("detail", fields.get("message")))
        if isinstance(error, dict):
            error = cast("dict[str, object]", error).get("message") or json.dumps(error)
        if error is not None:
            return str(error)
    return shorten(text, 300)


def transport_error(exc: Exception, point: Endpoint) -> Exception:
    """A failure of the connection (the client's, e.g. ``aiohttp.ClientError``), said for this call."""
    if isinstance(exc, TimeoutError):  # a connect or read timeout of the client
        return APITimeoutError(f"no answer from {shown(point)} in time ({type(exc).__name__})")
    text = scrub_url(str(exc), point.base_url)
    return APIConnectionError(f"{shown(point)}: {type(exc).__name__}: {text}".rstrip(": "))


def shown(point: Endpoint) -> str:
    """The server as a message may name it: credentials in the URL (``user:pass@``, ``?api-key=``) left out."""
    return public_url(point.base_url)


def scrub_url(text: str, url: str) -> str:
    """``text`` (a client's error may quote the URL) with ``url`` in its public form."""
    return text.replace(url, public_url(url)) if url else text


# -- a reply's size -----------------------------------------------------------------

MAX_REPLY_BYTES = 64 * 1024 * 1024
"""The most one reply may hold (its body, or a stream's lines together): a broken server or
proxy streaming without end must fail the call, not fill the process's memory."""


class ReplyTooLargeError(Exception):
    """A reply past ``MAX_REPLY_BYTES``; not retried (the same server would send it again)."""


def too_large(point: Endpoint) -> ReplyTooLargeError:
    limit = MAX_REPLY_BYTES / 1024 / 1024
    return ReplyTooLargeError(f"the reply from {shown(point)} passed {limit:g} MB; it was cut off there")


class Reading:
    """One reply as its bytes arrive, held to the size limit and to the clock.

    Every chunk counts against ``MAX_REPLY_BYTES`` as it arrives, a line that never ends
    included (a line reader would hold it whole). The clock: a body must be complete
    within ``timeout`` of the request; a stream may run long, but ``timeout`` may not pass
    without a ``data:`` line, so a server sending only keep-alive comments, or dripping one
    line a byte at a time, fails instead of holding the call forever. The client's read
    timeout bounds each wait for a chunk.
    """

    __slots__ = ("_partial", "point", "size", "started", "stream", "timeout", "touched")

    def __init__(self, point: Endpoint, timeout: float, *, stream: bool) -> None:
        self.point = point
        self.timeout = timeout
        self.stream = stream
        self.size = 0
        self.started = self.touched = time.monotonic()
        self._partial: list[bytes] = []  # the pieces of a line not ended yet: joined once it ends

    def take(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > MAX_REPLY_BYTES:
            raise too_large(self.point)
        waited = time.monotonic() - (self.touched if self.stream else self.started)
        if waited > self.timeout:
            what = "no data from" if self.stream else "no complete answer from"
            raise APITimeoutError(f"{what} {shown(self.point)} in {self.timeout:g} s")

    def lines(self, chunk: bytes) -> list[str]:
        """The complete lines ``chunk`` ends (a line may end with CR, LF or CRLF, as in SSE)."""
        self.take(chunk)
        if b"\n" not in chunk and b"\r" not in chunk:  # a line still going on (held, not copied again)
            self._partial.append(chunk)
            return []
        parts = b"".join([*self._partial, chunk]).splitlines(keepends=True)
        self._partial = [parts.pop()] if parts and not parts[-1].endswith((b"\n", b"\r")) else []
        if any(part.startswith(b"data:") for part in parts):
            self.touched = time.monotonic()
        return [part.rstrip(b"\r\n").decode("utf-8", "replace") for part in parts]

    def rest(self) -> list[str]:
        """The last line, when the body ended without a line break."""
        partial, self._partial = b"".join(self._partial), []
        return [partial.decode("utf-8", "replace")] if partial else []


def _declared_too_large(headers: Mapping[str, Any]) -> bool:
    declared = str(headers.get("content-length", ""))
    return declared.isdigit() and int(declared) > MAX_REPLY_BYTES


async def aread_body(headers: Mapping[str, Any], body: AsyncIterable[bytes], reading: Reading) -> bytes:
    """The body (its chunks as they arrive), read up to ``MAX_REPLY_BYTES`` and within the reading's time."""
    if _declared_too_large(headers):
        raise too_large(reading.point)
    chunks: list[bytes] = []
    async for chunk in body:
        reading.take(chunk)
        chunks.append(chunk)
    return b"".join(chunks)
