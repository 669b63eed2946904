"""Streamed text is scrubbed of registered secrets, even one split across two pieces."""

from __future__ import annotations

from typing import Any

import pytest

from crew import Agent, Crew, Task
from crew.common.secrets import register
from crew.stream import TextDelta
from crew.stream.redact import DeltaScrubber, secret_prefix_length
from crew.testing import FunctionModel

SECRET = "zq-streamed-secret-4417"


async def leaker(messages: list[dict[str, Any]], tools: Any):
    """Says the secret whole in one piece, then split across two, then ordinary text."""
    yield f"whole {SECRET} here. "
    yield f"split {SECRET[:9]}"
    yield f"{SECRET[9:]} there. "
    yield "the end"


async def test_streamed_deltas_never_carry_a_registered_secret_even_split_in_two() -> None:
    register(SECRET)
    agent = Agent(role="Writer", goal="write", llm=FunctionModel(leaker))
    crew = Crew(agents=[agent], tasks=[Task(name="t", description="d", expected_output="x", agent=agent)])
    deltas = [item for item in [i async for i in crew.astream()] if isinstance(item, TextDelta)]

    streamed = "".join(d.text for d in deltas)
    assert streamed == "whole *** here. split *** there. the end"
    for delta in deltas:
        assert SECRET[:9] not in delta.text and SECRET[9:] not in delta.text


def test_only_a_tail_that_could_start_a_secret_is_held_back(fresh_secrets: None) -> None:
    register(SECRET)
    scrubber = DeltaScrubber()
    assert scrubber.feed("plain text, nothing held") == "plain text, nothing held"
    assert scrubber.feed("almost zq-stre") == "almost "  # could be the secret's start: held
    assert scrubber.feed("am") == ""
    assert scrubber.feed("ing along") == "zq-streaming along"  # it was not: out at once
    assert scrubber.feed("ends with zq-s") == "ends with "
    assert scrubber.flush() == "zq-s"  # the call ended: nothing more can complete it
    assert secret_prefix_length("abc", frozenset({SECRET})) == 0
    assert secret_prefix_length("x" * 100 + SECRET[:-1], frozenset({SECRET})) == len(SECRET) - 1


KEY = "sk-proj-" + "Q7w9E2r4T6y8U1i3O5p7A9s2"  # key-shaped, registered by nobody


@pytest.fixture
def nothing_registered(monkeypatch):
    """No secret registered (another test's ``sk-...`` key would hold back an ``sk-`` tail for its own sake)."""
    from crew.common import secrets

    monkeypatch.setattr(secrets, "_values", set())
    monkeypatch.setattr(secrets, "_pattern", None)
    secrets._generation[0] += 1
    yield
    secrets._generation[0] += 1


@pytest.mark.usefixtures("nothing_registered")
def test_a_key_nobody_registered_is_masked_when_split_across_pieces() -> None:
    for cut in range(1, len(KEY)):  # every place the provider could cut it
        scrubber = DeltaScrubber()
        out = [scrubber.feed("the key is "), scrubber.feed(KEY[:cut]), scrubber.feed(KEY[cut:] + " ok")]
        out.append(scrubber.flush())
        assert "".join(out) == "the key is *** ok", cut
        assert not any(KEY[i : i + 5] in piece for piece in out for i in range(len(KEY) - 4)), (cut, out)


@pytest.mark.usefixtures("nothing_registered")
def test_a_key_at_the_very_end_of_a_call_is_masked_at_flush() -> None:
    scrubber = DeltaScrubber()
    assert scrubber.feed("here: " + KEY[:10]) == "here: "
    assert scrubber.feed(KEY[10:]) == ""  # it may still be growing
    assert scrubber.flush() == "***"


@pytest.mark.usefixtures("nothing_registered")
def test_only_text_that_could_become_a_key_waits() -> None:
    scrubber = DeltaScrubber()
    assert scrubber.feed("a task-") == "a task-"  # no word boundary before "sk-": not a key
    assert scrubber.feed("skill ") == "skill "
    assert scrubber.feed("sky") == "sky"  # "sky" is no key prefix
    assert scrubber.feed(" and s") == " and "  # "s" may start "sk-"
    assert scrubber.feed("o on") == "so on"


@pytest.mark.usefixtures("nothing_registered")
def test_a_token_that_never_ends_is_not_buffered_and_stays_masked() -> None:
    """Hold-back is bounded: past HOLD_LIMIT the key goes out masked, and what continues it is dropped."""
    from crew.stream.redact import HOLD_LIMIT

    scrubber = DeltaScrubber()
    out = [scrubber.feed("sk-")]
    for _ in range(HOLD_LIMIT // 50 + 3):
        out.append(scrubber.feed("x" * 50))
    assert out[-1] == "" and "***" in "".join(out)
    sent = "".join(out)
    assert "x" not in sent
    assert scrubber.feed("xxxx then text") == " then text"
    assert scrubber.flush() == ""
