"""The native transport: OpenAI chat completions over httpx, without litellm or the openai SDK.

``LLM`` hands its calls here when :func:`crew.models.doors.choose` says ``native``.
One pooled ``httpx.AsyncClient`` serves each event loop (closed when the loop shuts its
async generators down, as ``asyncio.run`` does) and one ``httpx.Client`` the sync calls
of the process (closed at exit). Retries, rate limits and error reporting are the ones
the litellm door uses (:mod:`crew.models.retry`, :mod:`crew.models.ratelimit`,
:mod:`crew.models.failures`); HTTP failures become exceptions carrying ``status_code``
and the response headers, which is all the retry policy reads.
"""

from __future__ import annotations

import atexit
import json
import ssl
import threading
import weakref
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any

import httpx

from crew.common.secrets import register_url
from crew.common.usage import Usage
from crew.models.attempts import Attempt, Attempts
from crew.models.base import LLMResponse, ModelDelta, emit_call, split_tool_calls, with_tools
from crew.models.doors import endpoint
from crew.models.failures import shorten
from crew.models.openai_errors import (
    APITimeoutError,
    InternalServerError,
    MissingKeyError,
    ProviderError,
    Reading,
    aread_body,
    http_error,
    read_body,
    server_message,
    shown,
    transport_error,
)
from crew.models.pricing import cost
from crew.models.retry import MalformedResponse

if TYPE_CHECKING:
    import asyncio

    from crew.models.llm import LLM

TRANSPORT = "native"

_LITELLM_ONLY = frozenset(
    {"drop_params", "num_retries", "max_retries", "custom_llm_provider", "api_version", "litellm_params", "metadata"}
)
"""Keyword arguments litellm understands and an OpenAI server would reject."""


# -- one pooled client per event loop, one for sync calls -------------------------------

_loop_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, tuple[httpx.AsyncClient, Any]]] = (
    weakref.WeakKeyDictionary()
)
_sync_clients: dict[str, httpx.Client] = {}
_lock = threading.Lock()
_contexts: dict[str, ssl.SSLContext] = {}
_LIMITS = httpx.Limits(max_connections=256, max_keepalive_connections=32)


def _ssl_context(scheme: str) -> ssl.SSLContext:
    """One context per process: loading the CA bundle costs ~30 ms, which a client per loop
    would pay at every kickoff. Plain-HTTP clients get a context with no trust anchors at
    all: they never speak TLS (clients are kept per scheme), and could not trust anyone if they did."""
    with _lock:
        context = _contexts.get(scheme)
        if context is None:
            context = httpx.create_ssl_context() if scheme == "https" else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            _contexts[scheme] = context
        return context


def _scheme(url: str) -> str:
    return "https" if url[:6].lower() == "https:" else "http"


async def _async_client(url: str) -> httpx.AsyncClient:
    """This loop's client for the URL's scheme. A parked async generator closes it when the
    loop shuts its generators down (``asyncio.run`` does), so no connection outlives the loop."""
    import asyncio

    loop = asyncio.get_running_loop()
    scheme = _scheme(url)
    held = _loop_clients.setdefault(loop, {})
    entry = held.get(scheme)
    if entry is not None and not entry[0].is_closed:
        return entry[0]
    client = httpx.AsyncClient(timeout=None, limits=_LIMITS, verify=_ssl_context(scheme), follow_redirects=False)
    closer = _close_with_loop(client)
    await closer.__anext__()  # registers the generator with the loop's shutdown_asyncgens
    held[scheme] = (client, closer)  # the loop keeps generators weakly: hold it here
    return client


async def _close_with_loop(client: httpx.AsyncClient) -> AsyncIterator[None]:
    try:
        yield
    finally:
        await client.aclose()


def _client(url: str) -> httpx.Client:
    scheme = _scheme(url)
    context = _ssl_context(scheme)
    with _lock:
        client = _sync_clients.get(scheme)
        if client is None or client.is_closed:
            client = httpx.Client(timeout=None, limits=_LIMITS, verify=context, follow_redirects=False)
            _sync_clients[scheme] = client
            atexit.register(client.close)
        return client


# -- the request ----------------------------------------------------------------------


class _Call:
    """One call's request (built once, sent on every attempt) and how its reply is read."""

    def __init__(
        self, llm: LLM, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, stream: bool
    ) -> None:
        self.llm = llm
        self.stream = stream
        self.messages = messages
        key = llm.api_key.get_secret_value() if llm.api_key is not None else None
        self.point = endpoint(llm.model, llm.api_base, key)
        register_url(self.point.base_url)  # from OPENAI_BASE_URL, maybe: a server's error may quote it
        extra = dict(llm.model_extra or {})
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream" if stream else "application/json"}
        headers.update(extra.pop("extra_headers", None) or {})
        if self.point.api_key:
            headers["Authorization"] = f"Bearer {self.point.api_key}"
        self.headers = headers
        extra_body = extra.pop("extra_body", None) or {}
        body: dict[str, Any] = {"model": self.point.wire_model, "messages": messages}
        body.update((k, v) for k, v in extra.items() if k not in _LITELLM_ONLY)
        with_tools(body, tools)
        if llm.temperature is not None:
            body["temperature"] = llm.temperature
        if llm.max_tokens is not None:
            body["max_tokens"] = llm.max_tokens
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        body.update(extra_body)
        self.content = json.dumps(body, default=str).encode()
        self.timeout = httpx.Timeout(llm.timeout)

    def reading(self) -> Reading:
        """How this attempt's reply is read: a body within ``timeout`` of the request, a stream with
        no ``timeout`` gap between data lines; either up to ``MAX_REPLY_BYTES``."""
        return Reading(self.point, self.llm.timeout, stream=self.stream)

    def check_key(self) -> None:
        if self.point.api_key is None and self.point.base_url.rstrip("/") == "https://api.openai.com/v1":
            raise MissingKeyError(f"no API key for {self.point.base_url}: set api_key or {self.point.key_source}")

    def attempts(self) -> Attempts:
        """The LLM's retry loop; the key the endpoint resolved (maybe from the environment) is never shown."""
        return Attempts(self.llm.model, self.llm.retry_policy, self.llm.limiter, [self.point.api_key], _refused)

    def fail_status(self, response: httpx.Response, body: bytes) -> ProviderError:
        return http_error(response.status_code, body, response.headers, self.point)

    def finish(self, reply: dict[str, Any], latency: float, attempts: int) -> LLMResponse:
        return _response(self.llm.model, reply, latency, attempts, self.stream, self.messages)


def _refused(exc: Exception) -> str | None:
    return "refused before sending: a configuration problem" if isinstance(exc, MissingKeyError) else None


def _response(
    model: str, reply: dict[str, Any], latency: float, attempts: int, stream: bool, messages: Any = None
) -> LLMResponse:
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedResponse("the model's reply holds no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise MalformedResponse("the model's reply holds a choice without a message")
    tool_calls, invalid = split_tool_calls(message.get("tool_calls") or [])
    usage = reply.get("usage") or {}
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    cached = int(((usage.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0)
    response = LLMResponse(
        content=message.get("content"),
        tool_calls=tool_calls,
        invalid_tool_calls=invalid,
        usage=Usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=int(usage.get("total_tokens") or prompt + completion),
            requests=1,
            cost=cost(model, prompt, completion, cached),
        ),
        model=model,
        latency=latency,
        finish_reason=choice.get("finish_reason"),
    )
    emit_call(response, attempts=attempts, stream=stream, transport=TRANSPORT, messages=messages)
    return response


def _json_reply(body: bytes) -> dict[str, Any]:
    try:
        reply = json.loads(body)
    except ValueError:
        raise MalformedResponse(f"the reply is not JSON: {shorten(body.decode('utf-8', 'replace'), 120)}") from None
    if not isinstance(reply, dict):
        raise MalformedResponse("the reply is not a JSON object")
    return reply


class _Stream:
    """Server-sent chat-completion chunks joined into one reply (content, tool calls by index, usage)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.carried = False
        self.done = False

    def feed(self, line: str) -> str | None:
        """One line of the body (``Reading`` held it to the size limit); returns the text it adds, if any."""
        if not line.startswith("data:"):
            return None  # blank separators, comments, event: lines
        data = line[5:].strip()
        if data == "[DONE]":
            self.done = True
            return None
        if not data:
            return None
        try:
            chunk = json.loads(data)
        except ValueError:
            raise MalformedResponse(f"a stream chunk is not JSON: {shorten(data, 120)}") from None
        if not isinstance(chunk, dict):
            return None
        if "error" in chunk:
            raise InternalServerError(server_message(data.encode()), 500)
        if chunk.get("usage"):
            self.usage, self.carried = chunk["usage"], True
        added: list[str] = []
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
            text = delta.get("content")
            if text is not None:
                self.carried = True
                if text:
                    added.append(text)
            for part in delta.get("tool_calls") or []:
                self.carried = True
                call = self.calls.setdefault(int(part.get("index", len(self.calls))), {"arguments": []})
                if part.get("id"):
                    call["id"] = part["id"]
                function = part.get("function") or {}
                if function.get("name"):
                    call["name"] = function["name"]
                if function.get("arguments"):
                    call["arguments"].append(function["arguments"])
        if added:
            joined = "".join(added)
            self.text.append(joined)
            return joined
        return None

    def reply(self) -> dict[str, Any]:
        if not self.carried:
            raise MalformedResponse("the model's stream ended without a message (no content, tool call or usage)")
        if not (self.done or self.finish_reason):  # a close-delimited body cut mid-way looks like an end
            raise MalformedResponse("the model's stream broke off before the reply was complete")
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text) if self.text else None}
        if self.calls:
            message["tool_calls"] = [
                {
                    "id": call.get("id"),
                    "type": "function",
                    "function": {"name": call.get("name", ""), "arguments": "".join(call["arguments"])},
                }
                for _, call in sorted(self.calls.items())
            ]
        elif message["content"] is None:
            message["content"] = ""  # an empty answer is still an answer
        return {"choices": [{"message": message, "finish_reason": self.finish_reason}], "usage": self.usage or {}}


def _is_sse(response: httpx.Response) -> bool:
    return response.headers.get("content-type", "").startswith("text/event-stream")


# -- async ----------------------------------------------------------------------------


async def acomplete(llm: LLM, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> LLMResponse:
    """One reply, retried as the LLM's policy says; streamed on the wire when ``llm.stream``."""
    if llm.stream:
        final: LLMResponse | None = None
        async for item in astream(llm, messages, tools):
            if isinstance(item, LLMResponse):
                final = item
        assert final is not None  # astream always ends with the response
        return final
    call = _Call(llm, messages, tools, stream=False)

    async def attempt(this: Attempt) -> LLMResponse:
        call.check_key()
        return call.finish(await _apost(call), this.elapsed(), this.number)

    return await call.attempts().run(attempt)


async def _apost(call: _Call) -> dict[str, Any]:
    import asyncio

    client = await _async_client(call.point.url)
    reading = call.reading()
    try:
        async with (
            asyncio.timeout(call.llm.timeout),  # the whole attempt, not each read
            client.stream(
                "POST", call.point.url, content=call.content, headers=call.headers, timeout=call.timeout
            ) as response,
        ):
            body = await aread_body(response, reading)
    except APITimeoutError:
        raise
    except TimeoutError:
        raise APITimeoutError(f"no answer from {shown(call.point)} in {call.llm.timeout:g} s") from None
    except httpx.TransportError as exc:
        raise transport_error(exc, call.point) from None
    if response.status_code != 200:
        raise call.fail_status(response, body)
    return _json_reply(body)


async def astream(
    llm: LLM, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
) -> AsyncIterator[ModelDelta | LLMResponse]:
    """Text deltas as they arrive, then the whole response, once. Failures before the first
    delta are retried; after it, retrying would repeat text the caller already has."""
    call = _Call(llm, messages, tools, stream=True)

    async def attempt(this: Attempt) -> AsyncGenerator[ModelDelta | LLMResponse]:
        call.check_key()
        client = await _async_client(call.point.url)
        reading = call.reading()
        try:
            async with client.stream(
                "POST", call.point.url, content=call.content, headers=call.headers, timeout=call.timeout
            ) as response:
                if response.status_code != 200:
                    raise call.fail_status(response, await aread_body(response, reading))
                sse = _is_sse(response)
                if not sse:  # a server that ignored stream=true: one JSON reply
                    reply = _json_reply(await aread_body(response, reading))
                else:
                    stream = _Stream()
                    async for chunk in response.aiter_bytes():
                        for line in reading.lines(chunk):
                            text = stream.feed(line)
                            if text:
                                yield ModelDelta(text=text)
                    for line in reading.rest():
                        stream.feed(line)
                    reply = stream.reply()
        except httpx.TransportError as exc:
            raise transport_error(exc, call.point) from None
        final = call.finish(reply, this.elapsed(), this.number)
        if not sse and final.content:
            yield ModelDelta(text=final.content)
        yield final

    async for item in call.attempts().stream(attempt):
        yield item


# -- sync -----------------------------------------------------------------------------


def complete(llm: LLM, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> LLMResponse:
    """Blocking twin of :func:`acomplete` (the process's sync client; safe in any thread)."""
    call = _Call(llm, messages, tools, stream=llm.stream)

    def attempt(this: Attempt) -> LLMResponse:
        call.check_key()
        return call.finish(_post(call), this.elapsed(), this.number)

    return call.attempts().run_sync(attempt)


def _post(call: _Call) -> dict[str, Any]:
    client = _client(call.point.url)
    reading = call.reading()
    try:
        with client.stream(
            "POST", call.point.url, content=call.content, headers=call.headers, timeout=call.timeout
        ) as response:
            if response.status_code != 200:
                raise call.fail_status(response, read_body(response, reading))
            if not call.stream or not _is_sse(response):
                return _json_reply(read_body(response, reading))
            stream = _Stream()
            for chunk in response.iter_bytes():
                for line in reading.lines(chunk):
                    stream.feed(line)
            for line in reading.rest():
                stream.feed(line)
            return stream.reply()
    except httpx.TransportError as exc:
        raise transport_error(exc, call.point) from None
