"""Streamed text is scrubbed of registered secrets, even one split across two pieces."""

from __future__ import annotations

from typing import Any

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
