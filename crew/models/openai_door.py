"""The native door: OpenAI chat completions over aiohttp, without litellm or the openai SDK.

``LLM`` hands a call here when :func:`crew.models.doors.choose` says ``native``. One
keep-alive pool serves each event loop and endpoint (:mod:`crew.models.openai_pool`, closed
when the loop shuts its async generators down, as ``asyncio.run`` does); sync callers drive
the same async path (:func:`crew.models.calling.complete_sync`). Retries, rate limits and error reporting are
the ones the litellm door uses (:mod:`crew.models.attempts`); the bytes on the wire are
:mod:`crew.models.openai_wire`'s, their size and clock :mod:`crew.models.openai_errors`'s.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import unquote, urlsplit, urlunsplit

import aiohttp

from crew.common.secrets import register_url
from crew.models.attempts import Attempt, Attempts
from crew.models.base import LLMResponse, ModelDelta
from crew.models.estimate import estimated_usage
from crew.models.openai_endpoint import Endpoint, endpoint
from crew.models.openai_errors import (
    APITimeoutError,
    MissingKeyError,
    ProviderError,
    Reading,
    aread_body,
    http_error,
    shown,
    transport_error,
)
from crew.models.openai_pool import DEFAULT_MAX_CONNECTIONS, Pool, pool
from crew.models.openai_wire import ChunkStream, json_reply, request_body, request_headers, response
from crew.models.settings import CallSettings, Messages

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager

__all__ = ["NativeDoor"]


class NativeDoor:
    """One call to an OpenAI-protocol server with the settings its LLM read for it."""

    def __init__(self, settings: CallSettings) -> None:
        self.settings = settings

    def supports_function_calling(self) -> bool:
        """litellm's model table, read as data: no litellm import."""
        from crew.models.pricing import supports_function_calling

        return supports_function_calling(self.settings.model)

    async def acomplete(self, messages: Messages, tools: Messages | None) -> LLMResponse:
        """One reply, retried as the LLM's policy says; streamed on the wire when the LLM streams."""
        if self.settings.stream:
            final: LLMResponse | None = None
            async for item in self.astream(messages, tools):
                if isinstance(item, LLMResponse):
                    final = item
            assert final is not None  # astream always ends with the response
            return final
        call = _Call(self.settings, messages, tools, stream=False)

        async def attempt(this: Attempt) -> LLMResponse:
            call.check_key()
            return call.finish(await _apost(call), this)

        return await call.attempts().run(attempt)

    async def astream(self, messages: Messages, tools: Messages | None) -> AsyncIterator[ModelDelta | LLMResponse]:
        """Text deltas as they arrive, then the whole response, once. Failures before the first
        delta are retried; after it, retrying would repeat text the caller already has."""
        call = _Call(self.settings, messages, tools, stream=True)

        async def attempt(this: Attempt) -> AsyncGenerator[ModelDelta | LLMResponse]:
            call.check_key()
            reply: dict[str, Any] = {}
            sse = True
            async with contextlib.aclosing(_astream_reply(call)) as items:
                async for item in items:
                    if isinstance(item, ModelDelta):
                        yield item
                    else:
                        reply, sse = item
            final = call.finish(reply, this)
            if not sse and final.content:  # a server that ignored stream=true: its whole text at once
                yield ModelDelta(text=final.content)
            yield final

        async for item in call.attempts().stream(attempt):
            yield item


class _Call:
    """One call's request (built once, sent on every attempt) and how its reply is read."""

    def __init__(self, settings: CallSettings, messages: Messages, tools: Messages | None, *, stream: bool) -> None:
        self.settings = settings
        self.stream = stream
        self.messages = messages
        self.tools = tools
        self.point: Endpoint = endpoint(settings.model, settings.api_base, settings.api_key)
        register_url(self.point.base_url)  # from OPENAI_BASE_URL, maybe: a server's error may quote it
        self.headers = request_headers(settings, self.point.api_key, stream=stream)
        self.url = _with_url_credentials(self.point.url, self.headers)
        self.content = request_body(settings, self.point.wire_model, messages, tools, stream=stream)
        # a stream bounds each wait (to connect, for a chunk); a whole reply's attempt is bounded as a
        # whole by ``_apost`` with the same limit, which covers those waits, so it sets no timer per read
        self.timeout = _client_timeout(settings.timeout) if stream else _NO_TIMERS
        self.max_connections = settings.max_connections

    def reading(self) -> Reading:
        """How this attempt's reply is read: a body within ``timeout`` of the request, a stream with
        no ``timeout`` gap between data lines; either up to ``MAX_REPLY_BYTES``."""
        return Reading(self.point, self.settings.timeout, stream=self.stream)

    def check_key(self) -> None:
        if self.point.api_key is None and self.point.base_url.rstrip("/") == "https://api.openai.com/v1":
            raise MissingKeyError(f"no API key for {self.point.base_url}: set api_key or {self.point.key_source}")

    def attempts(self) -> Attempts:
        """The LLM's retry loop; the key the endpoint resolved (maybe from the environment) is never shown."""
        settings = self.settings
        return Attempts(settings.model, settings.policy, settings.limiter, [self.point.api_key], _refused)

    def fail_status(self, answer: aiohttp.ClientResponse, body: bytes) -> ProviderError:
        return http_error(answer.status, body, answer.headers, self.point)

    def finish(self, reply: dict[str, Any], this: Attempt) -> LLMResponse:
        stream = self.stream or self.settings.stream
        if self.stream and not reply.get("usage"):  # a server ignoring include_usage: counted all the same
            self.estimate_usage(reply)
        return response(self.settings.model, reply, this.elapsed(), this.number, stream, self.messages)

    def estimate_usage(self, reply: dict[str, Any]) -> None:
        """Give a reply without usage an estimate (a malformed one is left for ``response`` to refuse)."""
        choices: object = reply.get("choices")
        first: object = cast("list[object]", choices)[0] if isinstance(choices, list) and choices else None
        message: object = cast("dict[str, object]", first).get("message") if isinstance(first, dict) else None
        if isinstance(message, dict):
            reply["usage"] = estimated_usage(self.messages, self.tools, cast("dict[str, Any]", message))

    def send(self, client: Pool) -> AbstractAsyncContextManager[aiohttp.ClientResponse]:
        """The POST, as a context manager whose response is read as it arrives; redirects are answers."""
        return client.session.post(
            self.url,
            data=self.content,
            headers=self.headers,
            timeout=self.timeout,
            allow_redirects=False,
            proxy=client.proxy,
            proxy_auth=client.proxy_auth,
        )


_NO_TIMERS = aiohttp.ClientTimeout(total=None)


@functools.lru_cache(maxsize=64)
def _client_timeout(seconds: float) -> aiohttp.ClientTimeout:
    """The bounds of each wait (to connect, for a chunk); one per value, as they are immutable."""
    return aiohttp.ClientTimeout(total=None, connect=seconds, sock_read=seconds)


def _with_url_credentials(url: str, headers: dict[str, str]) -> str:
    """``url`` without its ``user:password@``, sent as basic auth instead (over the key, as httpx did):
    aiohttp refuses a URL's credentials beside an ``Authorization`` header."""
    if "@" not in url:  # no credentials: nothing to take out (the common case, with no parsing)
        return url
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}".encode()
    headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def _refused(exc: Exception) -> str | None:
    return "refused before sending: a configuration problem" if isinstance(exc, MissingKeyError) else None


def _is_sse(answer: aiohttp.ClientResponse) -> bool:
    return answer.headers.get("content-type", "").startswith("text/event-stream")


async def _apost(call: _Call) -> dict[str, Any]:
    """One attempt of a whole reply: the request, the headers and the body within ``timeout``."""
    client = await _async_client(call.point.url, call.max_connections)
    reading = call.reading()
    try:
        async with asyncio.timeout(call.settings.timeout), call.send(client) as answer:  # the whole attempt
            body = await aread_body(answer.headers, answer.content.iter_any(), reading)
    except APITimeoutError:
        raise
    except TimeoutError:
        raise APITimeoutError(f"no answer from {shown(call.point)} in {call.settings.timeout:g} s") from None
    except aiohttp.ClientError as exc:
        raise transport_error(exc, call.point) from None
    if answer.status != 200:
        raise call.fail_status(answer, body)
    return json_reply(body)


async def _opened(stack: contextlib.AsyncExitStack, call: _Call, client: Pool) -> aiohttp.ClientResponse:
    """The stream's response, its headers in within ``timeout``: the client bounds each read only, so a
    server sending its headers a byte at a time would otherwise hold the call forever."""
    try:
        async with asyncio.timeout(call.settings.timeout):
            return await stack.enter_async_context(call.send(client))
    except TimeoutError:
        raise APITimeoutError(f"no answer from {shown(call.point)} in {call.settings.timeout:g} s") from None


async def _astream_reply(call: _Call) -> AsyncGenerator[ModelDelta | tuple[dict[str, Any], bool]]:
    """One attempt of a stream: its text deltas, then the reply joined and whether it came as events."""
    client = await _async_client(call.point.url, call.max_connections)
    reading = call.reading()
    try:
        async with contextlib.AsyncExitStack() as stack:
            answer = await _opened(stack, call, client)
            if answer.status != 200:
                raise call.fail_status(answer, await aread_body(answer.headers, answer.content.iter_any(), reading))
            if not _is_sse(answer):  # a server that ignored stream=true: one JSON reply
                yield json_reply(await aread_body(answer.headers, answer.content.iter_any(), reading)), False
                return
            stream = ChunkStream()
            async for chunk in answer.content.iter_any():
                for line in reading.lines(chunk):
                    text = stream.feed(line)
                    if text:
                        yield ModelDelta(text=text)
            for line in reading.rest():
                stream.feed(line)
            yield stream.reply(), True
    except APITimeoutError:
        raise
    except (aiohttp.ClientError, TimeoutError) as exc:  # a chunk's wait past ``timeout`` is a TimeoutError
        raise transport_error(exc, call.point) from None


# -- the connections ------------------------------------------------------------------


async def _async_client(url: str, max_connections: int = DEFAULT_MAX_CONNECTIONS) -> Pool:
    """This loop's pool for the URL's endpoint (see :mod:`crew.models.openai_pool`)."""
    return await pool(url, max_connections)
