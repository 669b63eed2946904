"""An empty reply is never a final answer: one correction turn, then an AgentError naming why."""

import pytest

from crew.agent import prompts
from crew.agent.agent import Agent
from crew.errors import AgentError
from crew.models import LLM, LLMResponse
from crew.tasks.task import Task
from crew.testing import FunctionModel, Reply
from crew.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def scripted(*replies, function_calling=True):
    """A FunctionModel playing ``replies`` in order; ``model.seen`` holds the messages of each call."""
    queue, seen = list(replies), []

    def fn(messages, tools):
        seen.append(list(messages))
        return queue.pop(0)

    model = FunctionModel(fn, function_calling=function_calling)
    model.seen = seen
    return model


def task():
    return Task(name="sum", description="Add 3 and 4", expected_output="a number")


async def test_native_empty_reply_gets_one_correction_then_the_answer_counts():
    model = scripted("", "7")
    steps = []
    agent = Agent(role="Calculator", goal="Add", llm=model, tools=[add])
    out = await agent.aexecute_task(task(), step_callback=steps.append)

    assert out.raw == "7" and out.usage.requests == 2
    assert [s.kind for s in steps] == ["correction", "final_answer"]
    second_call = model.seen[1]
    assert second_call[-1] == {"role": "user", "content": prompts.EMPTY_REPLY}
    assert [m["role"] for m in second_call] == ["system", "user", "user"]  # no empty assistant message sent


@pytest.mark.parametrize(
    ("finish_reason", "shown"),
    [
        (None, "finish_reason: not reported"),
        ("length", "finish_reason: length: the reply ran into the token limit"),
        ("content_filter", "finish_reason: content_filter: the provider's content filter"),
    ],
)
async def test_native_empty_twice_in_a_row_is_an_agent_error_naming_the_reason(finish_reason, shown):
    model = scripted(*[LLMResponse(content=None, finish_reason=finish_reason)] * 2)
    steps = []
    agent = Agent(role="Mute", goal="Nothing", llm=model, tools=[add])
    with pytest.raises(AgentError) as caught:
        await agent.aexecute_task(task(), step_callback=steps.append)

    message = str(caught.value)
    assert "agent 'Mute' got an empty reply on task 'sum' twice in a row" in message and shown in message
    assert (caught.value.agent, caught.value.task) == ("Mute", "sum")
    assert model.calls == 2
    assert [s.kind for s in steps] == ["correction", "final_answer"]  # the failing turn is reported: it was paid for
    assert all(s.usage.requests == 1 for s in steps)


async def test_empty_replies_apart_are_each_corrected_once():
    model = scripted("", [{"name": "add", "args": {"a": 3, "b": 4}}], "  \n", "The sum is 7.")
    agent = Agent(role="Calculator", goal="Add", llm=model, tools=[add])
    out = await agent.aexecute_task(task())
    assert out.raw == "The sum is 7." and [r.name for r in out.tool_calls] == ["add"]
    assert sum(m == {"role": "user", "content": prompts.EMPTY_REPLY} for m in model.seen[-1]) == 2


async def test_text_mode_empty_twice_raises_and_empty_after_a_correction_is_not_the_answer():
    # the weak-model fallback takes unmarked text after a format correction as the answer: never ""
    model = scripted("I think so.", "", "", function_calling=False)
    agent = Agent(role="Weak", goal="Try", llm=model, tools=[add])
    with pytest.raises(AgentError, match=r"agent 'Weak' got an empty reply on task 'sum' twice in a row"):
        await agent.aexecute_task(task())
    assert model.seen[2][-1] == {"role": "user", "content": prompts.EMPTY_REPLY_TEXT}


async def test_text_mode_bare_final_answer_marker_is_empty_and_recovers():
    model = scripted("Thought: done\nFinal Answer:", "Final Answer: 7", function_calling=False)
    agent = Agent(role="Calculator", goal="Add", llm=model, tools=[add])
    out = await agent.aexecute_task(task())
    assert out.raw == "7"
    assert model.seen[1][-2:] == [
        {"role": "assistant", "content": "Thought: done\nFinal Answer:"},
        {"role": "user", "content": prompts.EMPTY_REPLY_TEXT},
    ]


async def test_text_mode_without_tools_does_not_take_an_empty_reply():
    agent = Agent(role="Writer", goal="Write", llm=scripted("", "", function_calling=False))
    with pytest.raises(AgentError, match="twice in a row"):
        await agent.aexecute_task(task())


async def test_empty_correction_counts_against_max_iter_and_an_empty_best_answer_still_raises():
    model = scripted("", "")
    agent = Agent(role="Mute", goal="Nothing", llm=model, tools=[add], max_iter=1)
    with pytest.raises(
        AgentError,
        match=r"within max_iter=1 turns, and none when asked for its best answer "
        r"\(finish_reason: not reported\)",
    ):
        await agent.aexecute_task(task())
    assert model.seen[1][-1]["content"] == prompts.FORCE_FINAL  # turn 1 was the correction: max_iter spent


async def test_finish_reason_from_the_provider_reaches_the_error_over_http(openai_server):
    openai_server.enqueue(Reply.text("", finish_reason="length"), Reply.text("", finish_reason="length"))
    llm = LLM("openai/gpt-4o-mini", api_base=openai_server.url, api_key="sk-test", num_retries=0)
    agent = Agent(role="Writer", goal="Write", llm=llm, tools=[add])
    with pytest.raises(AgentError, match=r"twice in a row.*\(finish_reason: length: .*max_tokens\)"):
        await agent.aexecute_task(task())
    assert len(openai_server.requests) == 2
    assert openai_server.requests[1].messages[-1] == {"role": "user", "content": prompts.EMPTY_REPLY}
