"""The native door's connections: kept alive and shared by a loop's calls, at most ``max_connections``
open per endpoint, and a URL's credentials sent as basic auth (aiohttp refuses them beside a key).

The server is an asyncio one on this test's loop: it counts the connections it accepts and
the ones open at once, and keeps the Authorization header each request brought.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import ValidationError

from crew.models import LLM

MESSAGES = [{"role": "user", "content": "hello"}]
REPLY = json.dumps(
    {"choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}], "usage": {}}
).encode()


class CountingServer:
    """Answers every chat completion with "ok" once ``gate`` opens; counts connections, keeps auth headers."""

    def __init__(self) -> None:
        self.accepted = self.open = self.most_open = 0
        self.auth: list[str] = []
        self.gate = asyncio.Event()
        self.gate.set()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower()
                fields = dict(line.split(": ", 1) for line in head.split("\r\n")[1:] if ": " in line)
                await reader.readexactly(int(fields.get("content-length", "0")))
                self.auth.append(fields.get("authorization", ""))
                await self.gate.wait()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(REPLY)
                )
                writer.write(REPLY)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.open -= 1
            writer.close()


async def serving(server: CountingServer) -> tuple[asyncio.Server, str]:
    listening = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    return listening, f"http://127.0.0.1:{listening.sockets[0].getsockname()[1]}/v1"


def llm(base: str, **kw) -> LLM:
    return LLM("openai/gpt-4o-mini", api_base=base, api_key="sk-pool", transport="native", num_retries=0, **kw)


async def test_concurrent_calls_share_at_most_max_connections():
    server = CountingServer()
    listening, base = await serving(server)
    server.gate.clear()  # every call waits for its answer, so all twelve want a connection at once
    model = llm(base, max_connections=3)
    async with listening:
        calls = [asyncio.ensure_future(model.acomplete(MESSAGES)) for _ in range(12)]
        while len(server.auth) < 3:  # three requests in: the pool has no fourth connection to give
            await asyncio.sleep(0)
        server.gate.set()
        replies = await asyncio.gather(*calls)
    assert [r.content for r in replies] == ["ok"] * 12
    assert len(server.auth) == 12 and server.most_open == 3 and server.accepted == 3  # kept alive, reused


async def test_calls_in_turn_reuse_one_connection():
    server = CountingServer()
    listening, base = await serving(server)
    model = llm(base)
    async with listening:
        for _ in range(5):
            assert (await model.acomplete(MESSAGES)).content == "ok"
    assert server.accepted == 1 and server.auth == ["bearer sk-pool"] * 5


async def test_a_urls_credentials_go_as_basic_auth_as_httpx_sent_them():
    server = CountingServer()
    listening, base = await serving(server)
    async with listening:
        reply = await llm(base.replace("http://", "http://admin:pa%40ss@")).acomplete(MESSAGES)
    assert reply.content == "ok"
    assert server.auth == ["basic " + "YWRtaW46cGFAc3M=".lower()]  # admin:pa@ss, over the key as httpx did


def test_max_connections_must_be_positive():
    with pytest.raises(ValidationError, match="max_connections"):
        LLM("openai/gpt-4o-mini", max_connections=0)
    assert LLM("openai/gpt-4o-mini").settings().max_connections == 10_000
