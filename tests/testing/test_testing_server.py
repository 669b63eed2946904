"""The local OpenAI-compatible server itself, spoken to over plain HTTP (httpx)."""

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from crew.testing import OpenAIServer, Reply, openai_server


def post(server: OpenAIServer, body: dict, path: str = "/v1/chat/completions", **kw) -> httpx.Response:
    base = server.url.removesuffix("/v1")
    return httpx.post(base + path, json=body, headers={"Authorization": "Bearer sk-secret"}, timeout=5, **kw)


CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}


def test_script_replies_in_order_with_usage_and_records_requests():
    with openai_server(
        [
            Reply.text("one", prompt_tokens=3, completion_tokens=1),
            Reply.tools({"name": "f", "args": {"x": 1}, "id": "call_9"}),
        ]
    ) as server:
        first = post(server, CHAT).json()
        second = post(server, CHAT, path="/chat/completions").json()
        exhausted = post(server, CHAT)
        assert server.url.startswith("http://127.0.0.1:")
    assert first["choices"][0]["message"] == {"role": "assistant", "content": "one"}
    assert first["usage"] == {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
    call = second["choices"][0]["message"]["tool_calls"][0]
    assert call == {"id": "call_9", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
    assert second["choices"][0]["finish_reason"] == "tool_calls"
    assert exhausted.status_code == 500 and "script exhausted" in exhausted.json()["error"]["message"]
    assert [r.path for r in server.requests] == ["/v1/chat/completions", "/chat/completions", "/v1/chat/completions"]
    assert server.requests[0].messages == CHAT["messages"] and server.requests[0].model == "gpt-4o-mini"
    assert server.requests[0].headers["authorization"] == "***"  # never stored (names lower-cased)


def test_handler_answers_from_the_request_and_scripts_win_first():
    server = OpenAIServer([Reply.text("scripted")], handler=lambda r: f"saw {r.messages[-1]['content']}")
    with server:
        texts = [post(server, CHAT).json()["choices"][0]["message"]["content"] for _ in range(2)]
    assert texts == ["scripted", "saw hi"]


def test_faults_status_retry_after_and_malformed_body():
    with openai_server([Reply.error(429, "slow down", retry_after=2), Reply.malformed()]) as server:
        limited = post(server, CHAT)
        broken = post(server, CHAT)
    assert limited.status_code == 429 and limited.headers["retry-after"] == "2"
    assert limited.json()["error"] == {"message": "slow down", "type": "rate_limit_error", "param": None, "code": "429"}
    assert broken.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(broken.text)


def test_streaming_sends_sse_chunks_ending_in_done():
    with openai_server([Reply.tools({"name": "f", "args": {"q": "a long argument"}}, content="hello world!")]) as s:
        body = {**CHAT, "stream": True, "stream_options": {"include_usage": True}}
        response = post(s, body)
    assert response.headers["content-type"] == "text/event-stream"
    events = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    args = "".join(
        tc["function"].get("arguments", "")
        for c in chunks
        if c["choices"]
        for tc in c["choices"][0]["delta"].get("tool_calls", [])
    )
    assert text == "hello world!" and json.loads(args) == {"q": "a long argument"}
    assert len([c for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")]) > 1
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


def test_concurrent_clients_are_served_in_parallel():
    in_flight = peak = 0
    lock = threading.Lock()

    def handler(request):
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.05)
        with lock:
            in_flight -= 1
        return Reply.text(request.messages[-1]["content"])

    with openai_server(handler=handler) as server, httpx.Client(timeout=10) as client:

        def one(i):
            body = {**CHAT, "messages": [{"role": "user", "content": f"m{i}"}]}
            return client.post(server.url + "/chat/completions", json=body).json()["choices"][0]["message"]["content"]

        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(one, range(32)))
    assert answers == [f"m{i}" for i in range(32)]
    assert len(server.requests) == 32
    assert peak > 1  # one thread per connection: a slow reply does not hold up the others


def test_stop_is_prompt_with_a_slow_reply_in_flight_and_idle_connections():
    server = OpenAIServer(handler=lambda r: Reply.text("late", delay=30)).start()
    client = httpx.Client()  # keeps an idle keep-alive connection to the server
    server.enqueue(Reply.text("quick"))
    assert client.post(server.url + "/chat/completions", json=CHAT).status_code == 200
    failures = []

    def slow_request():
        try:
            httpx.post(server.url + "/chat/completions", json=CHAT, timeout=10)
        except httpx.HTTPError as exc:
            failures.append(exc)

    thread = threading.Thread(target=slow_request)
    thread.start()
    while len(server.requests) < 2:
        time.sleep(0.01)
    started = time.perf_counter()
    server.stop()
    thread.join(timeout=5)
    client.close()
    assert time.perf_counter() - started < 5  # the reply was due in 30 s
    assert not thread.is_alive() and failures  # the in-flight request was cut, not left hanging
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.url


def test_unknown_route_and_non_json_body():
    with openai_server() as server:
        base = server.url.removesuffix("/v1")
        assert httpx.post(base + "/v1/audio/speech", json={}).status_code == 404
        assert httpx.post(base + "/v1/embeddings", content=b"not json").status_code == 400
        assert httpx.post(server.url + "/chat/completions", content=b"not json").status_code == 400
        assert httpx.get(server.url + "/models").json()["data"][0]["object"] == "model"


def test_embeddings_are_answered_from_the_texts_not_the_chat_script():
    with openai_server() as server:
        body = httpx.post(server.url + "/embeddings", json={"model": "m", "input": ["a b", "a b", "c"]}).json()
        vectors = [item["embedding"] for item in body["data"]]
        assert len(vectors[0]) == 64 and vectors[0] == vectors[1] != vectors[2]
        assert server.embedding_requests[0]["input"] == ["a b", "a b", "c"] and server.requests == []


def test_bad_script_items_are_rejected_early():
    with pytest.raises(TypeError, match="not int"):
        OpenAIServer([42])


def test_a_failing_handler_is_reported_to_the_client():
    def broken(request):
        raise KeyError("no such fixture")

    with openai_server(handler=broken) as server:
        response = post(server, CHAT)
    assert response.status_code == 500
    assert "handler failed: KeyError" in response.json()["error"]["message"]
