"""Agents through real litellm against the local OpenAI-compatible server: what goes over the wire."""

import json

import pytest
from pydantic import BaseModel

from crew.agent.agent import Agent
from crew.errors import LLMError
from crew.models import LLM
from crew.tasks.task import Task
from crew.testing import Reply
from crew.tools import tool


@tool
def get_weather(city: str, unit: str = "c") -> dict:
    """Current weather of a city."""
    return {"city": city, "temp": 3, "unit": unit}


@tool
def get_time(city: str) -> str:
    """Local time in a city."""
    return f"12:00 in {city}"


def local_llm(server, **kw) -> LLM:
    return LLM("openai/gpt-4o-mini", api_base=server.url, api_key="sk-test", num_retries=0, **kw)


def weather_task(**kw):
    return Task(name="weather", description="Weather and time in Oslo?", expected_output="one sentence", **kw)


async def test_native_tool_call_result_and_final_answer_over_http(openai_server):
    openai_server.enqueue(
        Reply.tools(
            {"name": "get_weather", "args": {"city": "Oslo"}, "id": "call_w1"}, prompt_tokens=100, completion_tokens=10
        ),
        Reply.text("It is 3 °C in Oslo.", prompt_tokens=150, completion_tokens=8),
    )
    agent = Agent(
        role="Forecaster",
        goal="Report weather",
        backstory="Meteorologist.",
        llm=local_llm(openai_server),
        tools=[get_weather, get_time],
    )
    out = await agent.aexecute_task(weather_task())

    assert out.raw == "It is 3 °C in Oslo."
    assert (out.usage.prompt_tokens, out.usage.completion_tokens, out.usage.requests) == (250, 18, 2)
    assert out.usage.total_tokens == 268 and out.usage.cost > 0
    assert out.model == "openai/gpt-4o-mini"

    first, second = openai_server.requests
    assert [t["function"]["name"] for t in first.tools] == ["get_weather", "get_time"]
    assert first.tools[0]["function"]["parameters"]["required"] == ["city"]
    system, user = first.messages
    assert system["role"] == "system" and "Tools you can call: get_weather, get_time." in system["content"]
    assert first.tools[1]["function"]["description"]  # each tool's purpose travels with the request
    assert user["content"].startswith("Task: Weather and time in Oslo?")
    assistant, tool_message = second.messages[2:]
    assert assistant["tool_calls"][0]["id"] == "call_w1"
    assert assistant["tool_calls"][0]["function"]["name"] == "get_weather"
    assert tool_message == {
        "role": "tool",
        "tool_call_id": "call_w1",
        "content": json.dumps({"city": "Oslo", "temp": 3, "unit": "c"}),
    }
    assert second.messages[0] == system  # the static prefix is byte-identical across turns


async def test_parallel_tool_calls_in_one_turn_answer_each_id_in_order(openai_server):
    openai_server.enqueue(
        Reply.tools(
            {"name": "get_weather", "args": {"city": "Oslo"}, "id": "call_a"},
            {"name": "get_time", "args": {"city": "Oslo"}, "id": "call_b"},
            {"name": "get_weather", "args": {"city": "Rome", "unit": "f"}, "id": "call_c"},
        ),
        Reply.text("Done."),
    )
    agent = Agent(role="Forecaster", goal="Report", llm=local_llm(openai_server), tools=[get_weather, get_time])
    out = await agent.aexecute_task(weather_task())

    assert out.raw == "Done."
    tool_messages = openai_server.requests[1].messages[3:]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_a", "call_b", "call_c"]
    assert [m["content"] for m in tool_messages] == [
        '{"city": "Oslo", "temp": 3, "unit": "c"}',
        "12:00 in Oslo",
        '{"city": "Rome", "temp": 3, "unit": "f"}',
    ]
    assert [call["id"] for call in openai_server.requests[1].messages[2]["tool_calls"]] == [
        "call_a",
        "call_b",
        "call_c",
    ]


async def test_text_mode_over_http_with_descriptions_and_recovery(openai_server):
    openai_server.enqueue(
        Reply.text("Let me check the weather first."),  # neither marker: corrected
        Reply.text("Thought: use the tool\nAction: Get_Weather\nAction Input: {'city': 'Oslo'} -- that's all"),
        Reply.text("Thought: I now know the final answer\nFinal Answer: 3 degrees in Oslo."),
    )
    agent = Agent(
        role="Forecaster",
        goal="Report",
        llm=local_llm(openai_server, function_calling=False),
        tools=[get_weather, get_time],
    )
    out = await agent.aexecute_task(weather_task())

    assert out.raw == "3 degrees in Oslo."
    assert [(r.name, r.args) for r in out.tool_calls] == [("get_weather", {"city": "Oslo"})]
    first, second, third = openai_server.requests
    assert all("tools" not in r.body for r in openai_server.requests)
    system = first.messages[0]["content"]
    assert "Tool Name: get_weather" in system and "Tool Arguments:" in system and "Action Input:" in system
    assert "did not follow the format" in second.messages[-1]["content"]
    assert third.messages[-1] == {"role": "user", "content": 'Observation: {"city": "Oslo", "temp": 3, "unit": "c"}'}


class Forecast(BaseModel):
    city: str
    temp: float


async def test_structured_answer_re_asked_over_http(openai_server):
    openai_server.enqueue(
        Reply.text('Here: {"city": "Oslo"}'),
        Reply.text('```json\n{"city": "Oslo", "temp": 3.5}\n```'),
    )
    agent = Agent(role="Forecaster", goal="Report", llm=local_llm(openai_server))
    out = await agent.aexecute_task(weather_task(output_pydantic=Forecast))

    assert out.pydantic == Forecast(city="Oslo", temp=3.5)
    assert "temp: Field required" in openai_server.requests[1].messages[-1]["content"]
    assert out.usage.requests == 2


async def test_rate_limit_is_retried_and_a_dead_server_is_an_llm_error(openai_server):
    openai_server.enqueue(
        Reply.error(429, "slow down", retry_after=0),
        Reply.tools({"name": "get_time", "args": {"city": "Oslo"}, "id": "call_t"}),
        *[Reply.error(500, "boom")] * 2,
    )
    llm = LLM("openai/gpt-4o-mini", api_base=openai_server.url, api_key="sk-test", num_retries=1, retry_base_delay=0.01)
    agent = Agent(role="Clock", goal="Tell time", llm=llm, tools=[get_time])
    with pytest.raises(LLMError, match="openai/gpt-4o-mini") as info:
        await agent.aexecute_task(weather_task())
    assert info.value.model == "openai/gpt-4o-mini"
    assert len(openai_server.requests) == 4  # 429 + retry, then 500 + one retry
    assert openai_server.requests[3].messages[-1] == {
        "role": "tool",
        "tool_call_id": "call_t",
        "content": "12:00 in Oslo",
    }
