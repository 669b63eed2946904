"""Text-protocol agents (models without function calling) and structured output, with FunctionModel."""

import json

import pytest
from pydantic import BaseModel

from crew.agent.agent import Agent
from crew.common.usage import Usage
from crew.errors import OutputValidationError
from crew.tasks.task import Task
from crew.testing import FunctionModel, TestModel
from crew.tools import tool


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"3 results for {query}"


@tool
def convert(amount: float, currency: str = "EUR") -> str:
    """Convert an amount of USD."""
    return f"{amount * 0.9:.2f} {currency}"


def scripted(*replies, function_calling=False):
    """A FunctionModel that plays ``replies`` in order and records what it was sent."""
    queue = list(replies)
    seen = []

    def fn(messages, tools):
        seen.append((list(messages), tools))
        return queue.pop(0)

    model = FunctionModel(fn, function_calling=function_calling)
    model.seen = seen
    return model


def make_task(**kw):
    return Task(name="t", description=kw.pop("description", "Find facts"), expected_output="facts", **kw)


async def test_text_mode_round_trip_with_messy_reply():
    model = scripted(
        "Thought: look it up\n**Action:** `Search`\n**Action Input:**\n```json\n{'query': 'cats'}\n```\n"
        "Observation: (imagined)\nFinal Answer: imagined",
        "Thought: I now know the final answer\nFinal Answer: Cats: 3 results.",
    )
    agent = Agent(role="Researcher", goal="Find", llm=model, tools=[search, convert])
    out = await agent.aexecute_task(make_task())

    assert out.raw == "Cats: 3 results."
    assert [(r.name, r.args) for r in out.tool_calls] == [("search", {"query": "cats"})]
    (first, first_tools), (second, _) = model.seen
    assert first_tools == []  # no provider tools in text mode
    system = first[0]["content"]
    assert "Tool Name: search" in system and "Tool Name: convert" in system
    assert "Action: <tool name, one of: search, convert>" in system
    assert second[-2]["role"] == "assistant" and "imagined" not in second[-2]["content"]
    assert second[-1] == {"role": "user", "content": "Observation: 3 results for cats"}


async def test_unparseable_reply_gets_a_correction_then_plain_text_is_the_answer():
    model = scripted("I think cats are nice.", "Cats are nice animals.")
    agent = Agent(role="R", goal="G", llm=model, tools=[search])
    out = await agent.aexecute_task(make_task())

    assert out.raw == "Cats are nice animals."
    correction = model.seen[1][0][-1]
    assert correction["role"] == "user" and "did not follow the format" in correction["content"]
    assert "Final Answer:" in correction["content"]


async def test_action_without_usable_input_is_corrected_and_recovered():
    model = scripted(
        "Action: convert\nAction Input: a hundred dollars",  # bare text, and convert takes two arguments
        'Action: convert\nAction Input: {"amount": 100}',
        "Final Answer: 90 EUR",
    )
    agent = Agent(role="R", goal="G", llm=model, tools=[search, convert])
    out = await agent.aexecute_task(make_task())

    assert out.raw == "90 EUR"
    assert "the Action Input of 'convert' is not a JSON object" in model.seen[1][0][-1]["content"]
    assert model.seen[2][0][-1]["content"] == "Observation: 90.00 EUR"


async def test_bare_input_for_a_single_argument_tool_and_odd_tool_name_case():
    model = scripted('Action: SEARCH\nAction Input: "dogs"', "Final Answer: done")
    agent = Agent(role="R", goal="G", llm=model, tools=[search])
    out = await agent.aexecute_task(make_task())
    assert [(r.name, r.args) for r in out.tool_calls] == [("search", {"query": "dogs"})]


async def test_unknown_action_is_an_observation_listing_the_tools():
    model = scripted('Action: browse\nAction Input: {"url": "x"}', "Final Answer: ok")
    agent = Agent(role="R", goal="G", llm=model, tools=[search])
    await agent.aexecute_task(make_task())
    observation = model.seen[1][0][-1]["content"]
    assert observation.startswith("Observation: Unknown tool 'browse'") and "search" in observation


async def test_function_calling_llm_reads_an_action_the_parser_could_not():
    helper = scripted([{"name": "convert", "args": {"amount": 10, "currency": "GBP"}}], function_calling=True)
    model = scripted("Action: convert\nAction Input: ten dollars into pounds", "Final Answer: 9 GBP")
    agent = Agent(role="R", goal="G", llm=model, function_calling_llm=helper, tools=[search, convert])
    steps = []
    out = await agent.aexecute_task(make_task(), step_callback=steps.append)

    assert out.raw == "9 GBP" and out.usage.requests == 3
    assert [s.usage.requests for s in steps] == [2, 1]  # the helper's call is part of the turn it served
    assert Usage.total([s.usage for s in steps]) == out.usage
    assert [(r.name, r.args) for r in out.tool_calls] == [("convert", {"amount": 10, "currency": "GBP"})]
    [(helper_messages, helper_tools)] = helper.seen
    assert "ten dollars into pounds" in helper_messages[0]["content"]
    assert {t["function"]["name"] for t in helper_tools} == {"search", "convert"}
    assert model.seen[1][0][-1]["content"] == "Observation: 9.00 GBP"


async def test_text_mode_without_tools_takes_any_reply_as_the_answer():
    model = scripted("Just an answer, no markers.")
    agent = Agent(role="R", goal="G", llm=model)
    out = await agent.aexecute_task(make_task())
    assert out.raw == "Just an answer, no markers."
    assert "Action" not in model.seen[0][0][0]["content"]


async def test_text_mode_max_iter_asks_for_a_final_answer():
    model = scripted(*['Action: search\nAction Input: {"query": "q"}'] * 2, "Thought: ok\nFinal Answer: best effort")
    agent = Agent(role="R", goal="G", llm=model, tools=[search], max_iter=2)
    out = await agent.aexecute_task(make_task())
    assert out.raw == "best effort"
    assert "Final Answer:" in model.seen[2][0][-1]["content"] and "step limit" in model.seen[2][0][-1]["content"]


class Plan(BaseModel):
    city: str
    days: int
    sights: list[str]


async def test_structured_output_is_re_asked_with_the_problems():
    model = scripted(
        'Final Answer: ```json\n{"city": "Rome", "days": "three"}\n```',
        "Final Answer: {'city': 'Rome', 'days': 3, 'sights': ['Colosseum']}",
    )
    agent = Agent(role="Planner", goal="Plan", llm=model)
    out = await agent.aexecute_task(make_task(output_pydantic=Plan))

    assert out.pydantic == Plan(city="Rome", days=3, sights=["Colosseum"]) and out.json_dict is None
    assert json.loads(out.raw) == {"city": "Rome", "days": 3, "sights": ["Colosseum"]}
    first_prompt = model.seen[0][0][1]["content"]
    assert "JSON schema" in first_prompt and '"sights"' in first_prompt
    re_ask = model.seen[1][0][-1]["content"]
    assert "- days:" in re_ask and "- sights: Field required" in re_ask
    assert out.usage.requests == 2


async def test_structured_output_gives_up_after_the_bound():
    model = scripted(*["not json"] * 3, function_calling=True)
    agent = Agent(role="Planner", goal="Plan", llm=model)
    with pytest.raises(OutputValidationError, match=r"Planner.*task 't'.*output_json=Plan \(after 2 re-ask"):
        await agent.aexecute_task(make_task(output_json=Plan))
    assert len(model.seen) == 3


async def test_output_json_and_test_model_fit_the_schema():
    agent = Agent(role="Planner", goal="Plan", llm=TestModel())
    out = await agent.aexecute_task(make_task(output_json=Plan))
    assert out.pydantic is None and Plan.model_validate(out.json_dict)
    assert json.loads(out.raw) == out.json_dict


async def test_result_as_answer_output_is_validated_without_a_model_call():
    @tool(result_as_answer=True)
    def plan_trip(city: str) -> Plan:
        """Plan a trip."""
        return Plan(city=city, days=2, sights=["Harbour"])

    model = scripted('Action: plan_trip\nAction Input: {"city": "Oslo"}')
    agent = Agent(role="R", goal="G", llm=model, tools=[plan_trip])
    out = await agent.aexecute_task(make_task(output_pydantic=Plan))
    assert out.pydantic == Plan(city="Oslo", days=2, sights=["Harbour"]) and len(model.seen) == 1
