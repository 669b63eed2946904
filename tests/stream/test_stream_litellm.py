"""Streaming through both doors of ``LLM`` (real litellm, and the native OpenAI transport)
against the local OpenAI-compatible server (server-sent events).

The deltas a consumer sees are the provider's chunks, one event per chunk, as they arrive:
the server sends its reply in 8-character chunks with a pause between them, and the test
checks both the pieces and that the first ones reached the consumer before the last left.
"""

from __future__ import annotations

import time

import pytest

from crew import Agent, Crew, CrewOutput, Task, tool
from crew.models import LLM
from crew.stream import TextDelta, ToolCallFinished
from crew.testing import Reply

ANSWER = "Bees dance to tell the hive where the flowers are."


@tool
def hive_count(region: str) -> int:
    """How many hives a region has."""
    return 42


pytestmark = pytest.mark.usefixtures("fresh_secrets")  # tests/stream/conftest.py


def local_llm(server, transport: str = "auto") -> LLM:
    return LLM("openai/gpt-4o-mini", api_base=server.url, api_key="sk-test", num_retries=0, transport=transport)


@pytest.mark.parametrize("transport", ["litellm", "native"])
async def test_deltas_are_the_servers_chunks_as_they_arrive(openai_server, transport):
    sent: list[tuple[float, str]] = []
    openai_server.on_chunk = lambda chunk: sent.append(
        (time.perf_counter(), (chunk["choices"][0]["delta"].get("content") or "") if chunk["choices"] else "")
    )
    openai_server.enqueue(
        Reply.tools({"name": "hive_count", "args": {"region": "north"}}),
        Reply.text(ANSWER, chunk_delay=0.02),
    )
    agent = Agent(role="Keeper", goal="explain bees", llm=local_llm(openai_server, transport), tools=[hive_count])
    crew = Crew(
        agents=[agent], tasks=[Task(name="bees", description="Why do bees dance?", expected_output="x", agent=agent)]
    )

    received: list[tuple[float, TextDelta]] = []
    items = []
    async for item in crew.astream():
        items.append(item)
        if isinstance(item, TextDelta):
            received.append((time.perf_counter(), item))

    assert agent.llm.door == transport
    assert all(request.stream for request in openai_server.requests)
    pieces = [ANSWER[i : i + 8] for i in range(0, len(ANSWER), 8)]
    assert pieces[2:4] == ["ll the h", "ive wher"]
    pieces[2:4] = ["ll the ", "hive wher"]  # a lone "h" could start a key ("hf_..."): it waits for the next piece
    assert [d.text for _, d in received] == pieces  # one event per provider chunk, not the reply chopped up
    assert {(d.task, d.agent, d.turn) for _, d in received} == {("bees", "Keeper", 2)}
    last_sent = max(at for at, text in sent if text)
    assert received[0][0] < last_sent  # the first piece was read while the server was still sending
    finished = [e for e in items if isinstance(e, ToolCallFinished)]
    assert [(e.tool, e.status) for e in finished] == [("hive_count", "success")]
    assert isinstance(items[-1], CrewOutput) and items[-1].raw == ANSWER
