"""A model server that redirects to another origin never receives the call's headers there.

A 307 keeps the method and body, and a client that follows it re-sends every header it
was given: ``extra_headers`` (an ``X-Api-Key``) or the key itself would reach a server the
user never named. Two local servers on different ports are two origins: the first answers
307 to the second, the second records what it gets.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from crew import LLM
from crew.errors import LLMError
from crew.models.calling import complete_sync
from crew.models.litellm_http import LoopBoundClient

SECRET = "hdr-secret-7f3a9c2e"

REPLY = {
    "id": "c1",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


class _Recorder(BaseHTTPRequestHandler):
    """The other origin: answers like a model server and keeps the headers of every request."""

    seen: list[dict[str, str]]

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.startswith("/moved/"):  # a redirect that stays on this origin
            self.send_response(308)
            self.send_header("Location", self.path.removeprefix("/moved"))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.seen.append(dict(self.headers))
        body = json.dumps(REPLY).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _Redirector(BaseHTTPRequestHandler):
    """The origin the user named: every request is sent on to ``target`` with a 307."""

    target: str

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(307)
        self.send_header("Location", self.target + self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def _serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def origins() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """(the redirecting server's URL, the other origin's URL, the headers the other origin received)."""
    seen: list[dict[str, str]] = []
    recorder = _serve(type("Recorder", (_Recorder,), {"seen": seen}))
    other = f"http://127.0.0.1:{recorder.server_address[1]}"
    redirector = _serve(type("Redirector", (_Redirector,), {"target": other}))
    yield f"http://127.0.0.1:{redirector.server_address[1]}/v1", other, seen
    for server in (redirector, recorder):
        server.shutdown()
        server.server_close()


def _llm(url: str, transport: str, *, stream: bool = False) -> LLM:
    return LLM(
        "openai/m",
        api_base=url,
        api_key="sk-redirect-test-0123456789",
        transport=transport,
        stream=stream,
        num_retries=2,  # a refused redirect is final: no attempt is repeated
        extra_headers={"X-Api-Key": SECRET},
    )


@pytest.mark.parametrize("stream", [False, True])
def test_no_header_follows_a_redirect_to_another_origin(origins, transport, stream):
    url, other, seen = origins
    seen.clear()
    with pytest.raises(LLMError) as failure:
        complete_sync(_llm(url, transport, stream=stream), [{"role": "user", "content": "hi"}])
    assert not seen, f"the other origin received a request: {seen}"
    message = str(failure.value)
    assert "1 attempt(s)" in message, message
    assert SECRET not in message
    if transport == "litellm":  # the native door (no redirect followed at all) says only the status
        assert "redirect" in message and other in message, message
    else:
        assert "307" in message, message


def test_litellm_follows_a_redirect_on_the_same_origin(origins):
    _, other, seen = origins
    seen.clear()
    reply = complete_sync(_llm(other + "/moved/v1", "litellm"), [{"role": "user", "content": "hi"}])
    assert reply.content == "hello"
    assert [headers["x-api-key"] for headers in seen] == [SECRET]


def test_litellm_http_clients_close_with_their_loop(origins):
    """Each event loop gets its own client, and ``asyncio.run``'s end closes it: none is left open."""
    import asyncio

    from crew.models.litellm_loading import load_litellm

    _, other, _ = origins
    llm = _llm(other + "/v1", "litellm")
    for _ in range(2):
        asyncio.run(llm.acomplete([{"role": "user", "content": "hi"}]))
    session = load_litellm().aclient_session
    assert isinstance(session, LoopBoundClient)
    assert session.loop_clients() == 0
