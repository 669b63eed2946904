"""Retries, timeouts and error reporting of LLM through both doors (real litellm, the native transport)."""

import asyncio
import logging
import time

import pytest

from crew.common.events import bus
from crew.errors import LLMError
from crew.models import LLM, complete_sync, load_litellm
from crew.testing import Reply

KEY = "sk-test-5ecret-Value-0123456789"
MESSAGES = [{"role": "user", "content": "hello"}]


def local_llm(server, transport, **kw) -> LLM:
    kw.setdefault("retry_base_delay", 0.01)
    return LLM("openai/gpt-4o-mini", api_base=server.url, api_key=KEY, transport=transport, **kw)


@pytest.fixture
def events():
    seen = []
    unsubscribe = bus.subscribe(seen.append)
    yield seen
    unsubscribe()


async def test_rate_limit_then_success_honours_retry_after(openai_server, transport, events):
    openai_server.enqueue(Reply.error(429, "slow down", retry_after=0.4), Reply.text("done"))
    response = await local_llm(openai_server, transport, retry_base_delay=0.0).acomplete(MESSAGES)

    assert response.content == "done"
    first, second = openai_server.requests
    assert second.received_at - first.received_at >= 0.39  # waited what the server asked, not the tiny backoff
    retry = next(e for e in events if e.type == "llm.retry")
    assert retry.data["delay"] == pytest.approx(0.4) and "Retry-After" in retry.data["reason"]
    call = next(e for e in events if e.type == "llm.call")
    assert call.data["attempts"] == 2


async def test_retry_after_in_milliseconds(openai_server, transport):
    openai_server.enqueue(Reply.error(503, headers={"retry-after-ms": "250"}), Reply.text("ok"))
    started = time.perf_counter()
    assert (await local_llm(openai_server, transport, retry_base_delay=0.0).acomplete(MESSAGES)).content == "ok"
    assert time.perf_counter() - started >= 0.24


async def test_persistent_500_raises_llm_error_after_the_set_retries(openai_server, transport, events):
    openai_server.handler = lambda request: Reply.error(500, "upstream exploded")
    with pytest.raises(LLMError) as caught:
        await local_llm(openai_server, transport, num_retries=3).acomplete(MESSAGES)

    assert len(openai_server.requests) == 4  # one attempt + three retries
    error = caught.value
    assert error.model == "openai/gpt-4o-mini"
    text = str(error)
    assert "openai/gpt-4o-mini" in text and "4 attempt(s)" in text and "HTTP 500" in text
    assert "upstream exploded" in text
    assert [e.data["attempt"] for e in events if e.type == "llm.retry"] == [1, 2, 3]
    assert any(e.type == "llm.error" for e in events)


def test_sync_complete_retries_too(openai_server, transport):
    openai_server.enqueue(Reply.error(502), Reply.error(500), Reply.text("third time lucky"))
    assert complete_sync(local_llm(openai_server, transport), MESSAGES).content == "third time lucky"
    assert len(openai_server.requests) == 3


async def test_no_retries_means_one_request(openai_server, transport):
    openai_server.handler = lambda request: Reply.error(500)
    with pytest.raises(LLMError, match="retries disabled"):
        await local_llm(openai_server, transport, num_retries=0).acomplete(MESSAGES)
    assert len(openai_server.requests) == 1


@pytest.mark.parametrize("status", [400, 401, 404])
async def test_client_errors_are_not_retried(openai_server, transport, status):
    openai_server.handler = lambda request: Reply.error(status, "you did something wrong")
    with pytest.raises(LLMError, match="not retryable"):
        await local_llm(openai_server, transport, num_retries=5).acomplete(MESSAGES)
    assert len(openai_server.requests) == 1


async def test_timeout_is_retried_then_reported(openai_server, transport):
    openai_server.handler = lambda request: Reply.text("too late", delay=6.0)
    if transport == "litellm":
        load_litellm()  # its first import can take seconds on a loaded machine: not the window timed here
    started = time.perf_counter()
    with pytest.raises(LLMError) as caught:
        await local_llm(openai_server, transport, timeout=1.0, num_retries=1).acomplete(MESSAGES)
    # two attempts cut at 1 s, not two 6 s replies (a second, not less: under load litellm's own
    # set-up before it sends can take a few tenths, and a shorter bound cut the call before it left)
    assert time.perf_counter() - started < 9.0
    assert len(openai_server.requests) == 2
    assert "Timeout" in str(caught.value)


async def test_slow_reply_then_fast_one_succeeds(openai_server, transport):
    openai_server.enqueue(Reply.text("slow", delay=1.0), Reply.text("fast"))
    response = await local_llm(openai_server, transport, timeout=0.3).acomplete(MESSAGES)
    assert response.content == "fast"


async def test_malformed_json_is_retried(openai_server, transport):
    openai_server.enqueue(Reply.malformed(), Reply.text("well formed"))
    assert (await local_llm(openai_server, transport).acomplete(MESSAGES)).content == "well formed"
    assert len(openai_server.requests) == 2


async def test_retry_after_beyond_max_delay_gives_up_at_once(openai_server, transport):
    openai_server.handler = lambda request: Reply.error(429, "quota", retry_after=3600)
    started = time.perf_counter()
    with pytest.raises(LLMError, match="retry after 3600 s"):
        await local_llm(openai_server, transport, retry_max_delay=30).acomplete(MESSAGES)
    assert time.perf_counter() - started < 5  # did not sleep the hour
    assert len(openai_server.requests) == 1


async def test_api_key_never_in_errors_events_or_repr(openai_server, transport, events, monkeypatch):
    env_key = "sk-env-Another-Secret-98765"
    aws_secret = "wJalrXUtnFEMI-K7MDENG-bPxRfiCY"
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", aws_secret)
    # a provider that echoes credentials back in its error text
    openai_server.handler = lambda request: Reply.error(500, f"bad key {KEY} (also saw {env_key} and {aws_secret})")
    llm = local_llm(openai_server, transport, num_retries=1)
    with pytest.raises(LLMError) as caught:
        await llm.acomplete(MESSAGES)

    error = caught.value
    shown = [str(error), repr(error), repr(llm), str(llm), llm.model_dump_json(), str(llm.model_dump())]
    shown += [str(e.data) for e in events]
    for text in shown:
        assert KEY not in text and env_key not in text and aws_secret not in text
    assert "bad key ***" in str(error)
    # the original exception holds the key, so it is not chained, not even implicitly
    assert error.__cause__ is None and error.__context__ is None
    assert all(r.headers.get("authorization") == "***" for r in openai_server.requests)


async def test_error_without_secret_keeps_the_original_as_cause(openai_server, transport):
    openai_server.handler = lambda request: Reply.error(400, "bad request")
    with pytest.raises(LLMError) as caught:
        await local_llm(openai_server, transport).acomplete(MESSAGES)
    assert getattr(caught.value.__cause__, "status_code", None) == 400


async def test_unknown_provider_is_a_clear_error():
    with pytest.raises(LLMError, match="nosuchprovider/model"):
        await LLM("nosuchprovider/model", num_retries=2).acomplete(MESSAGES)


async def test_concurrent_callers_each_retry_independently(openai_server, transport):
    seen: dict[str, int] = {}

    def flaky(request):
        prompt = request.messages[-1]["content"]
        seen[prompt] = seen.get(prompt, 0) + 1
        return Reply.error(503) if seen[prompt] == 1 else Reply.text("ok " + prompt)

    openai_server.handler = flaky
    llm = local_llm(openai_server, transport)
    replies = await asyncio.gather(*[llm.acomplete([{"role": "user", "content": str(i)}]) for i in range(12)])
    assert [r.content for r in replies] == [f"ok {i}" for i in range(12)]
    assert seen == {str(i): 2 for i in range(12)}


async def test_no_log_record_holds_the_key_even_at_debug(openai_server, transport, caplog):
    openai_server.enqueue(Reply.error(500, f"echoing {KEY}"), Reply.text("ok"))
    with caplog.at_level(logging.DEBUG):  # every logger: crew's, litellm's, httpx's, the SDK's
        await local_llm(openai_server, transport).acomplete(MESSAGES)
    crew_records = [r.getMessage() for r in caplog.records if r.name == "crew"]
    assert any('"llm.retry"' in m for m in crew_records) and any('"llm.call"' in m for m in crew_records)
    assert all(KEY not in r.getMessage() and KEY not in str(r.args) for r in caplog.records)


def test_a_missing_key_is_reported_at_once_not_retried(openai_server, monkeypatch):
    # the OpenAI SDK refuses before sending; litellm labels that HTTP 500, which must not mean "retry"
    for name in ("OPENAI_API_KEY", "OPENAI_ADMIN_KEY"):
        monkeypatch.delenv(name, raising=False)
    llm = LLM(
        "openai/gpt-4o-mini", api_base=openai_server.url, num_retries=3, retry_base_delay=0.5, transport="litellm"
    )
    load_litellm()  # a cold import takes seconds: the clock is for the backoff only
    started = time.perf_counter()
    with pytest.raises(LLMError, match=r"1 attempt\(s\) \(refused by the client before sending.*Missing credentials"):
        complete_sync(llm, MESSAGES)
    assert openai_server.requests == [] and time.perf_counter() - started < 0.5  # no backoff was slept


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_native_without_a_key_refuses_openai_but_serves_a_local_endpoint(openai_server, monkeypatch, sync):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    # OpenAI's own endpoint needs a key: refused before anything is sent (no network here)
    llm = LLM("openai/gpt-4o-mini", num_retries=3, retry_base_delay=0.5, transport="native")
    started = time.perf_counter()
    with pytest.raises(LLMError, match=r"1 attempt\(s\) \(refused before sending.*set api_key or OPENAI_API_KEY"):
        complete_sync(llm, MESSAGES) if sync else await llm.acomplete(MESSAGES)
    assert time.perf_counter() - started < 0.5
    # a local server (vLLM, Ollama, LM Studio) usually needs none: the call goes without Authorization
    openai_server.enqueue(Reply.text("no key needed"))
    local = LLM("openai/gpt-4o-mini", api_base=openai_server.url, transport="native")
    response = complete_sync(local, MESSAGES) if sync else await local.acomplete(MESSAGES)
    assert response.content == "no key needed" and "authorization" not in openai_server.requests[0].headers


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
async def test_a_stream_without_any_message_is_retried_not_an_empty_answer(openai_server, transport, sync):
    openai_server.enqueue(Reply.malformed(), Reply.text("ok"))
    llm = local_llm(openai_server, transport, stream=True)
    response = complete_sync(llm, MESSAGES) if sync else await llm.acomplete(MESSAGES)
    assert response.content == "ok" and len(openai_server.requests) == 2


async def test_a_stream_that_stays_broken_names_the_cause(openai_server, transport):
    openai_server.handler = lambda request: Reply.malformed()
    with pytest.raises(
        LLMError, match=r"2 attempt\(s\) \(1 retry spent\): MalformedResponse: .*(without a message|not JSON)"
    ):
        await local_llm(openai_server, transport, stream=True, num_retries=1).acomplete(MESSAGES)
    assert len(openai_server.requests) == 2


async def test_an_empty_streamed_answer_is_still_an_answer(openai_server, transport):
    openai_server.enqueue(Reply.text("", completion_tokens=0))
    response = await local_llm(openai_server, transport, stream=True).acomplete(MESSAGES)
    assert response.content == "" and len(openai_server.requests) == 1


@pytest.mark.parametrize(
    ("status", "kind"), [(400, "BadRequestError"), (401, "AuthenticationError"), (404, "NotFoundError")]
)
async def test_client_errors_name_their_kind_and_carry_the_servers_message(openai_server, transport, status, kind):
    message = f"the server explains what is wrong with the request ({status}); it saw key {KEY}"
    openai_server.handler = lambda request: Reply.error(status, message)
    with pytest.raises(LLMError) as caught:
        await local_llm(openai_server, transport).acomplete(MESSAGES)
    text = str(caught.value)
    assert f"{kind} (HTTP {status})" in text and "the server explains what is wrong" in text
    assert KEY not in text and "it saw key ***" in text
    if transport == "native" and status == 404:
        assert "model 'gpt-4o-mini' at " + openai_server.url in text
    if transport == "native" and status == 401:
        assert "the API key from api_key was refused" in text


async def test_a_dead_endpoint_is_retried_as_a_connection_error(transport):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    llm = LLM(
        "openai/gpt-4o-mini",
        api_base=f"http://127.0.0.1:{port}/v1",
        api_key=KEY,
        num_retries=1,
        retry_base_delay=0.01,
        transport=transport,
    )
    with pytest.raises(LLMError, match=r"2 attempt\(s\) \(1 retry spent\).*Connection"):
        await llm.acomplete(MESSAGES)


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_native_reply_past_the_size_limit_fails_the_call_once(openai_server, monkeypatch, sync, stream):
    from crew.models import openai_errors

    monkeypatch.setattr(openai_errors, "MAX_REPLY_BYTES", 4096)  # the real limit is 64 MB
    openai_server.enqueue(Reply.text("x" * 20_000), Reply.text("never asked for"))
    llm = local_llm(openai_server, "native", stream=stream)
    with pytest.raises(LLMError, match=r"ReplyTooLargeError: the reply from http://127.0.0.1:\d+/v1 passed"):
        if sync:
            complete_sync(llm, MESSAGES)
        else:
            await llm.acomplete(MESSAGES)
    assert len(openai_server.requests) == 1  # cut off, not asked again
    monkeypatch.setattr(openai_errors, "MAX_REPLY_BYTES", 64 * 1024 * 1024)
    openai_server.clear()
    openai_server.enqueue(Reply.text("x" * 20_000))
    assert (await llm.acomplete(MESSAGES)).content == "x" * 20_000  # under the real limit: whole
