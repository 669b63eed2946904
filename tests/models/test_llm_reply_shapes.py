"""Replies a real server sends that the protocol does not promise: a stream without its usage chunk,
``tool_calls`` as an object, ``usage`` as a list. Each must come out as usage a budget can count, or as
a malformed reply that is retried and then a clear LLMError, on both doors.

The servers are raw sockets on 127.0.0.1 answering each request with fixed bytes, which the
scripted OpenAIServer (always protocol-correct) cannot send.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from crew.errors import LLMError
from crew.models import LLM, LLMResponse

MESSAGES = [{"role": "user", "content": "Write a short greeting for the team, please."}]


@contextmanager
def answering(*bodies: bytes) -> Iterator[tuple[str, list[int]]]:
    """A server answering the n-th request with ``bodies[n]`` (the last one again after them), then closing;
    yields its base URL and the count of requests it took."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    stop = threading.Event()
    taken = [0]

    def answer(conn: socket.socket, body: bytes) -> None:
        with conn:
            conn.settimeout(5)
            conn.recv(65536)
            try:
                conn.sendall(body)
            except OSError:
                return

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            body = bodies[min(taken[0], len(bodies) - 1)]
            taken[0] += 1
            threading.Thread(target=answer, args=(conn, body), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", taken
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def sse(*chunks: dict[str, Any]) -> bytes:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
    return head + b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def whole(reply: dict[str, Any]) -> bytes:
    data = json.dumps(reply).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    return head.encode() + b"Connection: close\r\n\r\n" + data


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip


def reply(message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": "r1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}], **extra}  # fmt: skip


def llm(base: str, transport: str, **kw: Any) -> LLM:
    return LLM("openai/gpt-4o-mini", api_base=base, api_key="sk-none", transport=transport, **kw)


async def streamed(model: LLM) -> LLMResponse:
    last = None
    async for last in model.astream(MESSAGES):  # noqa: B007 - the last item is the response
        pass
    assert isinstance(last, LLMResponse)
    return last


async def test_a_stream_without_a_usage_chunk_still_counts_its_tokens(transport):
    """A server that ignores ``stream_options.include_usage`` sent no usage: the native door said 0
    tokens, so a token budget never stopped a ``--stream`` run. Both doors estimate instead."""
    text = "Hello team, have a great and productive day together!"
    body = sse(chunk({"role": "assistant", "content": text[:20]}), chunk({"content": text[20:]}), chunk({}, "stop"))
    with answering(body) as (base, _):
        response = await streamed(llm(base, transport, num_retries=0))
    assert response.content == text
    usage = response.usage
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens and usage.requests == 1


BAD_SHAPES = {
    "tool_calls as an object": reply(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        }
    ),
    "usage as a list": reply({"role": "assistant", "content": "hi"}, usage=[1, 2, 3]),
    "a tool call's function as a string": reply(
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": "f"}]}
    ),
}


@pytest.mark.parametrize("shape", list(BAD_SHAPES))
async def test_a_malformed_reply_is_retried_then_a_clear_error(transport, shape):
    """These failed at once with a raw AttributeError; a reply the protocol does not allow is retried."""
    good = whole(reply({"role": "assistant", "content": "fine"}, usage={"prompt_tokens": 3, "completion_tokens": 1}))
    with answering(whole(BAD_SHAPES[shape]), good) as (base, taken):
        response = await llm(base, transport, num_retries=1, retry_base_delay=0).acomplete(MESSAGES)
    assert response.content == "fine" and taken[0] == 2
    refused = r"after 2 attempt\(s\) \(1 retry spent\): (MalformedResponse|.*Invalid response object)"
    with answering(whole(BAD_SHAPES[shape])) as (base, taken), pytest.raises(LLMError, match=refused):
        await llm(base, transport, num_retries=1, retry_base_delay=0).acomplete(MESSAGES)
    assert taken[0] == 2


BAD_CHUNKS = {
    "tool_calls as an object": chunk({"tool_calls": {"index": 0, "id": "c1", "function": {"name": "f"}}}),
    "choices as an object": {"id": "c1", "object": "chat.completion.chunk", "choices": {"delta": {"content": "x"}}},
    "usage as a list": {"id": "c1", "object": "chat.completion.chunk", "choices": [], "usage": [1, 2]},
}


@pytest.mark.parametrize("shape", list(BAD_CHUNKS))
async def test_a_malformed_stream_chunk_is_retried_then_a_clear_error(shape):
    """The native door's own stream reader (litellm's reads these chunks its own, lenient way)."""
    transport = "native"
    bad = sse(chunk({"role": "assistant"}), BAD_CHUNKS[shape], chunk({}, "stop"))
    good = sse(chunk({"role": "assistant", "content": "fine"}), chunk({}, "stop"))
    with answering(bad, good) as (base, taken):
        response = await streamed(llm(base, transport, num_retries=1, retry_base_delay=0))
    assert response.content == "fine" and taken[0] == 2
