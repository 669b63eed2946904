"""Issue 9 in the model layer: malformed replies, keys echoed by a provider, what litellm is told."""

from __future__ import annotations

import pytest

from crew.common.events import bus
from crew.errors import LLMError
from crew.models import LLM, load_litellm
from crew.testing import Reply

MESSAGES = [{"role": "user", "content": "hello"}]
HEADER_KEY = "hdr-Very-Private-Value-9f8e7d6c"


def _body(choices):
    return {"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": choices}


@pytest.mark.parametrize(
    ("choices", "said"),
    [
        ([], {"litellm": "MalformedResponse: the model's reply holds no choices"}),
        (
            [{"index": 0, "message": None, "finish_reason": "stop"}],
            {"litellm": "Invalid response object", "native": "MalformedResponse: the model's reply holds a choice"},
        ),
    ],
)
async def test_a_reply_without_choices_or_message_is_retried_then_a_clear_error(
    openai_server, transport, choices, said
):
    """Item 10: `choices: []` raised a raw IndexError; `message: null` carried litellm's traceback text."""
    said = said.get(transport, said["litellm"])
    openai_server.enqueue(Reply.raw(_body(choices)), Reply.raw(_body(choices)))
    llm = LLM(
        "openai/gpt-4o-mini", api_base=openai_server.url, api_key="sk-unused-0000", num_retries=1, transport=transport
    )
    llm.retry_base_delay = 0.01
    with pytest.raises(LLMError) as caught:
        await llm.acomplete(MESSAGES)
    text = str(caught.value)
    assert "LLM call to 'openai/gpt-4o-mini' failed after 2 attempt(s)" in text and said in text
    assert "Traceback" not in text and "IndexError" not in text
    assert len(openai_server.requests) == 2


async def test_a_header_key_echoed_in_a_401_body_is_scrubbed(openai_server, transport):
    """Item 8: a key sent in `extra_headers` and echoed by the provider showed in errors and events."""
    seen = []
    unsubscribe = bus.subscribe(seen.append)
    openai_server.handler = lambda request: Reply.error(401, f"bad key {request.headers.get('x-api-key')}")
    llm = LLM(
        "openai/gpt-4o-mini",
        api_base=openai_server.url,
        api_key="sk-unused-0000",
        extra_headers={"X-Api-Key": HEADER_KEY},
        transport=transport,
    )
    try:
        with pytest.raises(LLMError) as caught:
            await llm.acomplete(MESSAGES)
    finally:
        unsubscribe()
    assert openai_server.requests[0].headers.get("x-api-key") == HEADER_KEY  # it was sent
    assert HEADER_KEY not in str(caught.value) and "bad key ***" in str(caught.value)
    assert caught.value.__cause__ is None  # the original exception quotes it: not chained
    assert all(HEADER_KEY not in str(e.data) for e in seen)


def test_litellm_is_not_given_a_telemetry_flag_that_does_nothing():
    """Item 17: `litellm.telemetry = False` disabled nothing and shadowed the `litellm.telemetry` name."""
    litellm = load_litellm()
    assert getattr(litellm, "telemetry", None) is not False
