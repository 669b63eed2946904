"""The retry policy on real litellm/httpx exceptions: what is retried, how long we wait."""

import random
import time
from email.utils import formatdate

import httpx
import pytest

from crew.models import load_litellm
from crew.models.retry import RetryPolicy, is_retryable, retry_after


def litellm_error(kind: str, status: int, headers: dict[str, str] | None = None):
    litellm = load_litellm()
    response = httpx.Response(
        status, headers=headers or {}, request=httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    )
    return getattr(litellm, kind)(message="boom", llm_provider="openai", model="gpt-4o-mini", response=response)


@pytest.mark.parametrize(
    ("kind", "status", "retryable"),
    [
        ("RateLimitError", 429, True),
        ("InternalServerError", 500, True),
        ("ServiceUnavailableError", 503, True),
        ("BadRequestError", 400, False),
        ("AuthenticationError", 401, False),
        ("NotFoundError", 404, False),
    ],
)
def test_litellm_errors_are_classified_by_status(kind, status, retryable):
    assert is_retryable(litellm_error(kind, status)) is retryable


def test_timeouts_and_connection_errors_are_retryable():
    litellm = load_litellm()
    assert is_retryable(litellm.Timeout(message="slow", model="m", llm_provider="openai"))
    assert is_retryable(litellm.APIConnectionError(message="refused", llm_provider="openai", model="m"))
    assert is_retryable(TimeoutError()) and is_retryable(ConnectionResetError())
    assert not is_retryable(ValueError("a bug, not a hiccup"))


def test_retry_after_forms():
    assert retry_after(litellm_error("RateLimitError", 429, {"Retry-After": "7"})) == 7
    assert retry_after(litellm_error("RateLimitError", 429, {"retry-after-ms": "1500"})) == 1.5
    http_date = formatdate(time.time() + 60, usegmt=True)
    in_a_minute = retry_after(litellm_error("RateLimitError", 429, {"Retry-After": http_date}))
    assert 55 <= in_a_minute <= 60
    assert retry_after(litellm_error("RateLimitError", 429, {"Retry-After": "soon"})) is None
    assert retry_after(litellm_error("RateLimitError", 429)) is None


def test_backoff_grows_exponentially_with_jitter_and_a_cap():
    policy = RetryPolicy(retries=10, base_delay=1.0, max_delay=8.0)
    rng = random.Random(1)
    for retry, ceiling in [(1, 1), (2, 2), (3, 4), (4, 8), (5, 8), (9, 8)]:
        delays = [policy.backoff(retry, rng) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(set(delays)) > 40  # jittered, so many callers do not retry in lockstep


def test_next_delay_counts_retries_after_the_first_attempt():
    policy = RetryPolicy(retries=2, base_delay=0.5)
    error = litellm_error("InternalServerError", 500)
    assert policy.next_delay(1, error)[0] is not None
    assert policy.next_delay(2, error)[0] is not None
    assert policy.next_delay(3, error) == (None, "2 retries spent")
    assert policy.next_delay(1, litellm_error("BadRequestError", 400)) == (None, "not retryable")
    assert policy.next_delay(1, litellm_error("RateLimitError", 429, {"Retry-After": "3"})) == (3.0, "Retry-After 3 s")
    assert RetryPolicy(retries=1).next_delay(2, error) == (None, "1 retry spent")
    assert RetryPolicy(retries=0).next_delay(1, error) == (None, "retries disabled")


def test_unreadable_replies_are_retried_and_client_side_refusals_are_not():
    import openai

    from crew.models.retry import MalformedResponse, refused_before_sending

    assert is_retryable(MalformedResponse("stream ended without a message"))
    refused = litellm_error("InternalServerError", 500)
    refused.__context__ = openai.OpenAIError("Missing credentials")  # what litellm chains for a missing key
    assert refused_before_sending(refused) and not is_retryable(refused)
    assert RetryPolicy().next_delay(1, refused)[0] is None
    real = litellm_error("InternalServerError", 500)
    real.__context__ = openai.InternalServerError(
        "boom", response=httpx.Response(500, request=httpx.Request("POST", "http://127.0.0.1/v1")), body=None
    )
    assert not refused_before_sending(real) and is_retryable(real)
