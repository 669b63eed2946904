"""A local OpenAI-compatible chat server, so tests exercise the real HTTP path.

Mocking litellm would test our assumptions about litellm; this server lets the
real litellm (and the OpenAI SDK under it) talk HTTP to 127.0.0.1 and tells the
test exactly what arrived. Replies come from a script (consumed in order) or a
function of the request, and can inject the faults real providers produce:
429 with Retry-After, 5xx, slow answers, malformed JSON.

Standard library only (``http.server`` in a daemon thread): no port to
configure, nothing left running after ``stop()``.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from crew.testing.embeddings import embeddings_body
from crew.testing.replies import (
    ChatRequest,
    Handler,
    Reply,
    ReplyLike,
    as_reply,
    completion_body,
    error_body,
    stream_chunks,
)

_PATHS = ("/v1/chat/completions", "/chat/completions")
_EMBEDDING_PATHS = ("/v1/embeddings", "/embeddings")


class OpenAIServer:
    """An OpenAI-compatible ``/v1/chat/completions`` (and ``/v1/embeddings``) endpoint on 127.0.0.1.

    ``script`` replies are served in order, one per request; once the script is
    spent, ``handler`` (a function of the :class:`ChatRequest`) answers, and
    without one the server answers 500 "script exhausted" so a test that makes
    one call too many fails loudly. Use it as a context manager, then point an
    LLM at it: ``LLM("openai/gpt-4o-mini", api_base=server.url, api_key="sk-test")``.
    """

    def __init__(
        self, script: Iterable[ReplyLike] = (), handler: Handler | None = None, *, model: str | None = None
    ) -> None:
        self._script: deque[Reply] = deque(as_reply(r) for r in script)
        self.handler = handler
        self.model = model
        self.requests: list[ChatRequest] = []
        self.embedding_requests: list[dict[str, Any]] = []
        """Bodies of ``/v1/embeddings`` requests (answered by hashed words: crew/testing/embeddings.py)."""
        self.on_chunk: Callable[[dict[str, Any]], None] | None = None
        """Called with each streamed chunk right after it was flushed to the client (timing, tests)."""
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------
    def start(self) -> OpenAIServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _Server(("127.0.0.1", 0), _make_handler(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"openai-server-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, cut open connections and wake delayed replies; returns promptly."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what tests use --------------------------------------------------
    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running; use it as a context manager or call start()")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """The ``api_base`` to give litellm (ends in ``/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *replies: ReplyLike) -> None:
        with self._lock:
            self._script.extend(as_reply(r) for r in replies)

    @property
    def pending(self) -> int:
        """Scripted replies not served yet."""
        with self._lock:
            return len(self._script)

    def clear(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()

    # -- serving ---------------------------------------------------------
    def _next_reply(self, request: ChatRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            scripted = self._script.popleft() if self._script else None
        if scripted is not None:
            return scripted
        if self.handler is not None:
            return as_reply(self.handler(request))
        return Reply.error(500, "OpenAIServer: script exhausted and no handler set")

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 256  # the default 5 drops bursts of connects, which then retry after 1 s

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._connections: set[socket.socket] = set()
        self._conn_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conn_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._conn_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Unblock handler threads parked on idle keep-alive connections."""
        with self._conn_lock:
            conns = list(self._connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    """One HTTP exchange with the scripted server; ``server_of_replies`` is set per server."""

    server_of_replies: OpenAIServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go in separate writes: no 40 ms delayed-ACK stall

    def log_message(self, format: str, *args: Any) -> None:
        pass  # tests stay quiet

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send_json(
                200, {"object": "list", "data": [{"id": self.server_of_replies.model or "test", "object": "model"}]}
            )
        else:
            self._send_json(404, error_body(404, f"no route {self.path}"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.split("?")[0].rstrip("/") in _EMBEDDING_PATHS:
            self._embeddings(raw)
            return
        if self.path.split("?")[0].rstrip("/") not in _PATHS:
            self._send_json(404, error_body(404, f"no route {self.path}"))
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_json(400, error_body(400, "request body is not JSON"))
            return
        # names lower-cased (HTTP headers are case-insensitive; clients differ in how they write them)
        headers = {
            k.lower(): ("***" if k.lower() in ("authorization", "api-key") else v) for k, v in self.headers.items()
        }
        request = ChatRequest(path=self.path, body=body, headers=headers, received_at=time.time())
        try:
            reply = self.server_of_replies._next_reply(request)
        except Exception as exc:  # noqa: BLE001 - a broken handler is reported to the client
            reply = Reply.error(500, f"OpenAIServer handler failed: {type(exc).__name__}: {exc}")
        self.server_of_replies._sleep(reply.delay)
        if self.server_of_replies._stopping.is_set():
            return
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            self._answer(request, reply)

    def _embeddings(self, raw: bytes) -> None:
        """An embeddings request: answered from the text itself, not from the chat script."""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_json(400, error_body(400, "request body is not JSON"))
            return
        with self.server_of_replies._lock:
            self.server_of_replies.embedding_requests.append(body)
        self._send_json(200, embeddings_body(body))

    def _answer(self, request: ChatRequest, reply: Reply) -> None:
        if reply.body is not None:
            self._send_raw(reply.status, reply.body.encode(), "application/json", reply.headers)
        elif reply.status != 200:
            self._send_json(reply.status, error_body(reply.status, reply.content or ""), reply.headers)
        elif request.stream:
            self._send_stream(request, reply)
        else:
            self._send_json(200, completion_body(request, reply, self.server_of_replies.model), reply.headers)

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(payload).encode(), "application/json", headers or {})

    def _send_raw(self, status: int, data: bytes, ctype: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, request: ChatRequest, reply: Reply) -> None:
        # Connection: close delimits the body, so no chunked encoding is needed.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.close_connection = True
        for sent, chunk in enumerate(stream_chunks(request, reply, self.server_of_replies.model)):
            if reply.cut_after is not None and sent >= reply.cut_after:
                self.connection.shutdown(socket.SHUT_RDWR)  # the stream breaks here, no [DONE]
                return
            if sent and reply.chunk_delay:
                self.server_of_replies._sleep(reply.chunk_delay)
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.flush()
            if self.server_of_replies.on_chunk is not None:
                self.server_of_replies.on_chunk(chunk)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def _make_handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    """A handler class bound to ``server`` (http.server builds one handler per request from a class)."""
    return type("_Handler", (_Handler,), {"server_of_replies": server})


# -- OpenAI wire format ---------------------------------------------------------


def openai_server(
    script: Iterable[ReplyLike] = (), handler: Handler | None = None, *, model: str | None = None
) -> OpenAIServer:
    """A not-yet-started :class:`OpenAIServer`; ``with openai_server([...]) as server:`` starts it."""
    return OpenAIServer(script, handler, model=model)
