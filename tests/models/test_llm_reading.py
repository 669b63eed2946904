"""Replies that never end: a line without a break, a stream of keep-alive comments, a body dripped a
byte at a time. Each must fail its call within the LLM's limits (size, ``timeout``) on both doors,
never hold it forever or fill memory; and no error names a URL's credentials.

The servers here are raw sockets on 127.0.0.1 that send exactly the bytes a broken server or
proxy would, which the scripted OpenAIServer cannot.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from crew.errors import LLMError
from crew.models import LLM, complete_sync, load_litellm

MESSAGES = [{"role": "user", "content": "hello"}]
SSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
JSON = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"


# A call that hung would run until the server's ``limit`` (30 s); one that timed out ends within a
# second or two, and within ENDED even on a machine loaded by other work. The bound tells the two
# apart; it is not a speed figure.
ENDED = 15.0


@contextmanager
def raw_server(head: bytes, piece: bytes, every: float, limit: float = 30.0) -> Iterator[str]:
    """Answer every request with ``head``, then ``piece`` every ``every`` seconds until the client goes
    (or ``limit`` seconds pass: a test that failed must not leave the server running)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    stop = threading.Event()

    def answer(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            started = time.monotonic()
            try:
                conn.sendall(head)
                while not stop.is_set() and time.monotonic() - started < limit:
                    conn.sendall(piece)
                    if every:
                        stop.wait(every)
            except OSError:  # the client hung up: what a failed call does
                return

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


@pytest.fixture(autouse=True)
def _litellm_imported(request: pytest.FixtureRequest) -> None:
    """A cold litellm import takes seconds (more on a busy machine): the clocks here are for the calls."""
    if "transport" in request.fixturenames and request.getfixturevalue("transport") == "litellm":
        load_litellm()


def llm(base: str, transport: str, **kw) -> LLM:
    return LLM("openai/gpt-4o-mini", api_base=base, api_key="sk-none", transport=transport, num_retries=0, **kw)


async def read(model: LLM, stream: bool) -> None:
    if stream:
        async for _ in model.astream(MESSAGES):
            pass
    else:
        await model.acomplete(MESSAGES)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_keep_alive_comments_alone_time_out(transport, stream):
    """Every comment reset httpx's read timer: a stream of pings held the call forever."""
    with raw_server(SSE, b": ping\n\n", every=0.05) as base:
        started = time.monotonic()
        with pytest.raises(LLMError, match="Timeout"):
            await read(llm(base, transport, timeout=0.5, stream=stream), stream)
    assert time.monotonic() - started < ENDED


async def test_a_body_dripped_a_byte_at_a_time_times_out_on_every_path(transport):
    with raw_server(JSON, b" ", every=0.05) as base:  # whitespace before a JSON body: it never completes
        started = time.monotonic()
        with pytest.raises(LLMError, match="Timeout"):
            await read(llm(base, transport, timeout=0.5), stream=False)
        assert time.monotonic() - started < ENDED
        if transport == "native":  # a sync call drives the same bounded path (it once had a client of its own)
            started = time.monotonic()
            with pytest.raises(LLMError, match="APITimeoutError: no answer from"):
                complete_sync(llm(base, transport, timeout=0.5), MESSAGES)
            assert time.monotonic() - started < ENDED


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_a_line_that_never_ends_is_cut_at_the_size_limit(monkeypatch, sync):
    """httpx's line reader held a line without a break whole: memory grew without end."""
    from crew.models import openai_errors

    monkeypatch.setattr(openai_errors, "MAX_REPLY_BYTES", 256 * 1024)
    with raw_server(SSE + b"data: ", b"a" * 16384, every=0) as base:
        model = llm(base, "native", timeout=30, stream=True)
        with pytest.raises(LLMError, match="ReplyTooLargeError"):
            if sync:
                complete_sync(model, MESSAGES)
            else:
                await read(model, stream=True)


async def test_no_error_names_the_credentials_of_a_url(openai_server):
    from crew.testing import Reply

    openai_server.handler = lambda request: Reply.error(404, "no such model")
    port = openai_server.url.split(":")[2].split("/")[0]
    secret_base = f"http://admin:pa55w0rdXYZ@127.0.0.1:{port}/v1?api-key=QUERYSECRET123456"
    with pytest.raises(LLMError) as found:
        await llm(secret_base, "native").acomplete(MESSAGES)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        closed = free.getsockname()[1]
    with pytest.raises(LLMError) as refused:
        await llm(f"http://admin:pa55w0rdXYZ@127.0.0.1:{closed}/v1", "native").acomplete(MESSAGES)
    for error in (found.value, refused.value):
        text = str(error)
        assert "pa55w0rdXYZ" not in text and "QUERYSECRET" not in text and "admin" not in text
    assert f"at http://127.0.0.1:{port}/v1)" in str(found.value)


async def test_tool_options_without_tools_are_not_sent_on_either_door(openai_server, transport):
    """OpenAI answers 400 to ``parallel_tool_calls`` without ``tools``; the litellm door sent it."""
    openai_server.enqueue("hi")
    model = LLM(
        "openai/gpt-4o-mini",
        api_base=openai_server.url,
        api_key="sk-none",
        transport=transport,
        parallel_tool_calls=True,
        tool_choice="auto",
    )
    assert (await model.acomplete(MESSAGES)).content == "hi"
    body = openai_server.requests[-1].body
    assert "parallel_tool_calls" not in body and "tool_choice" not in body


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_headers_dripped_a_byte_at_a_time_time_out(transport, stream):
    """Each byte of the header phase reset httpx's read timer: a stream's headers held the call forever."""
    with raw_server(b"HTTP/1.1 200 OK\r\nX-Slow: ", b"a", every=0.05) as base:  # a header that never ends
        started = time.monotonic()
        with pytest.raises(LLMError, match="Timeout"):
            await read(llm(base, transport, timeout=0.5, stream=stream), stream)
        assert time.monotonic() - started < ENDED
        started = time.monotonic()
        with pytest.raises(LLMError, match="Timeout"):  # and from sync code, the same path
            complete_sync(llm(base, transport, timeout=0.5, stream=stream), MESSAGES)
        assert time.monotonic() - started < ENDED
