"""One model reply runs at most ``Agent.max_tool_calls_per_reply`` tool calls; the rest are answered."""

from typing import Any

from crew import Agent, Task, tool
from crew.agent.agent import MAX_TOOL_CALLS_PER_REPLY
from crew.testing import FunctionModel

RAN: list[int] = []


@tool
def ping(n: int) -> str:
    """Ping once."""
    RAN.append(n)
    return f"pong {n}"


def flood(count: int) -> FunctionModel:
    """A model that asks for ``count`` calls at once, then answers with the tool messages it got."""

    def fn(messages: list[dict[str, Any]], tools: Any) -> Any:
        if messages[-1]["role"] == "tool":
            return "\n".join(m["content"] for m in messages if m["role"] == "tool")
        return [{"name": "ping", "args": {"n": i}} for i in range(count)]

    return FunctionModel(fn)


def setup_function() -> None:
    RAN.clear()


async def test_calls_past_the_cap_do_not_run_and_each_is_answered_with_an_error_naming_the_cap():
    agent = Agent(role="R", goal="G", llm=flood(5), tools=[ping], max_tool_calls_per_reply=3)
    out = await agent.aexecute_task(Task(description="ping", expected_output="pongs"))
    assert RAN == [0, 1, 2]
    answers = out.raw.splitlines()
    assert answers[:3] == ["pong 0", "pong 1", "pong 2"] and len(answers) == 5  # every call id is answered
    assert all("at most 3 tool calls" in line and "max_tool_calls_per_reply" in line for line in answers[3:])
    assert [(r.status, r.refused) for r in out.tool_calls] == [("success", False)] * 3 + [("error", True)] * 2


async def test_the_default_cap_holds_a_flood_of_calls():
    agent = Agent(role="R", goal="G", llm=flood(MAX_TOOL_CALLS_PER_REPLY + 500), tools=[ping])
    assert agent.max_tool_calls_per_reply == MAX_TOOL_CALLS_PER_REPLY == 32
    out = await agent.aexecute_task(Task(description="ping", expected_output="pongs"))
    assert len(RAN) == 32 and len(out.tool_calls) == 532
