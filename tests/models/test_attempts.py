"""The one attempt loop both doors run (crew.models.attempts), driven by plain attempt functions.

The doors' own tests (test_llm_calls, test_llm_retries) run it against the local server;
these pin the loop's rules directly: a limiter slot per attempt, events per retry, the
door's fatal hook, and a stream's failure being final once text was delivered.
"""

import time
from collections.abc import AsyncGenerator

import pytest

from crew.common.events import bus
from crew.errors import LLMError
from crew.models import LLMResponse, ModelDelta
from crew.models.attempts import Attempt, Attempts
from crew.models.ratelimit import RateLimiter
from crew.models.retry import MalformedResponse, RetryPolicy

POLICY = RetryPolicy(retries=2, base_delay=0.0)


def events(kind: str, seen: list) -> list:
    return [e for e in seen if e.type == kind]


@pytest.fixture
def seen():
    got: list = []
    unsubscribe = bus.subscribe(got.append)
    yield got
    unsubscribe()


def full(limiter: RateLimiter) -> bool:
    """Whether the limiter's window is spent: the next slot is far in the future."""
    return limiter.reserve() > time.monotonic() + 30


async def test_run_retries_transient_failures_with_a_limiter_slot_per_attempt(seen):
    limiter = RateLimiter(3, period=60)
    numbers: list[int] = []

    async def attempt(this: Attempt) -> str:
        numbers.append(this.number)
        if this.number < 3:
            raise MalformedResponse("not yet")
        assert this.elapsed() >= 0
        return "ok"

    assert await Attempts("m", POLICY, limiter).run(attempt) == "ok"
    assert numbers == [1, 2, 3]
    assert [e.data["attempt"] for e in events("llm.retry", seen)] == [1, 2]
    assert full(limiter)  # three attempts took the window's three slots


async def test_giving_up_says_the_policy_reason_and_scrubs_secrets(seen):
    async def attempt(this: Attempt) -> str:
        raise MalformedResponse("reply leaked sk-secret-value-1234")

    with pytest.raises(LLMError, match=r"after 3 attempt\(s\) \(2 retries spent\)") as caught:
        await Attempts("m", POLICY, secrets=["sk-secret-value-1234"]).run(attempt)
    assert "sk-secret-value-1234" not in str(caught.value)
    [error] = events("llm.error", seen)
    assert error.data["attempts"] == 3 and "sk-secret-value-1234" not in error.data["error"]
    assert caught.value.__cause__ is None  # the original held the secret, so it is not chained


async def test_fatal_hook_stops_at_once():
    async def attempt(this: Attempt) -> str:
        raise MalformedResponse("would be retried")

    attempts = Attempts("m", POLICY, fatal=lambda exc: "known final")
    with pytest.raises(LLMError, match=r"1 attempt\(s\) \(known final\)"):
        await attempts.run(attempt)


def script(fail_after_text: bool):
    async def attempt(this: Attempt) -> AsyncGenerator[ModelDelta | LLMResponse]:
        if this.number == 1:
            if fail_after_text:
                yield ModelDelta(text="part")
            yield ModelDelta(text="")  # an empty delta is not delivered text
            raise ConnectionError("dropped")
        yield ModelDelta(text="whole")
        yield LLMResponse(content="whole", model="m")

    return attempt


async def test_stream_failure_before_text_is_retried():
    items = [item async for item in Attempts("m", POLICY).stream(script(fail_after_text=False))]
    assert [type(i).__name__ for i in items] == ["ModelDelta", "ModelDelta", "LLMResponse"]
    assert isinstance(items[-1], LLMResponse) and items[-1].content == "whole"


async def test_stream_failure_after_text_is_final(seen):
    got: list = []
    with pytest.raises(LLMError, match=r"1 attempt\(s\) \(the stream broke after text was delivered\)"):
        async for item in Attempts("m", POLICY).stream(script(fail_after_text=True)):
            got.append(item)
    assert [i.text for i in got] == ["part", ""]
    assert not events("llm.retry", seen) and len(events("llm.error", seen)) == 1


async def test_a_consumer_that_stops_early_closes_the_attempt():
    closed: list[bool] = []

    async def attempt(this: Attempt) -> AsyncGenerator[ModelDelta | LLMResponse]:
        try:
            yield ModelDelta(text="a")
            yield ModelDelta(text="b")
        finally:
            closed.append(True)

    stream = Attempts("m", POLICY).stream(attempt)
    async for _ in stream:
        break
    await stream.aclose()
    assert closed == [True]
