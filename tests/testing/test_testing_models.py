"""TestModel and FunctionModel: the offline ChatModels users test their crews with."""

import asyncio
import json
import time
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from crew.common.events import bus
from crew.models import ChatModel, LLMResponse, complete_sync
from crew.testing import FunctionModel, TestModel
from crew.tools import tool
from crew.tools.messages import ToolCall


class Filters(BaseModel):
    region: Literal["north", "south"]
    min_price: float = Field(ge=0, le=1000)


@tool
def search(query: str, filters: Filters, limit: int = 10) -> str:
    """Search the catalogue.

    Args:
        query: words to look for
        filters: where and how cheap
        limit: most results to return
    """
    return f"{limit} results for {query}"


@tool
def convert(amount: float, currency: Literal["EUR", "USD"], when: str | None = None) -> float:
    """Convert an amount of money."""
    return amount


class Report(BaseModel):
    title: str
    items: list[Filters]
    confidence: float = Field(ge=0, le=1)


TOOLS = [search.to_openai_tool(), convert.to_openai_tool()]
TASK = [
    {"role": "system", "content": "You are an analyst."},
    {"role": "user", "content": "Find cheap flats in the north."},
]


def test_doubles_implement_chat_model():
    assert isinstance(TestModel(), ChatModel)
    assert isinstance(FunctionModel(lambda m, t: "x"), ChatModel)
    assert TestModel().supports_function_calling
    assert not FunctionModel(lambda m, t: "x", function_calling=False).supports_function_calling


def test_first_turn_calls_every_tool_once_with_valid_arguments():
    response = complete_sync(TestModel(), TASK, TOOLS)

    assert [c.name for c in response.tool_calls] == ["search", "convert"]
    assert response.content is None
    for call, real in zip(response.tool_calls, [search, convert], strict=True):
        real.validate_args(call.args)  # the tool's own validation accepts what the model produced
    assert set(response.tool_calls[0].args) >= {"query", "filters"}
    assert len({c.id for c in response.tool_calls}) == 2
    assert response.raw_message["tool_calls"][0]["id"] == response.tool_calls[0].id


def test_answers_after_tool_results_and_mentions_the_task():
    model = TestModel()
    first = complete_sync(model, TASK, TOOLS)
    history = (
        TASK
        + [first.raw_message]
        + [
            {"role": "tool", "tool_call_id": c.id, "name": c.name, "content": f"result of {c.name}"}
            for c in first.tool_calls
        ]
    )
    final = complete_sync(model, history, TOOLS)

    assert final.tool_calls == []
    assert "Find cheap flats in the north." in final.content
    assert "result of search" in final.content and "result of convert" in final.content
    assert model.calls == 2


def test_structured_answer_is_valid_json_for_the_schema():
    history = [*TASK, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    for seed in range(10):
        response = complete_sync(TestModel(seed=seed), history, TOOLS, output_schema=Report.model_json_schema())
        Report.model_validate_json(response.content)


def test_deterministic_per_seed():
    assert complete_sync(TestModel(seed=1), TASK, TOOLS) == complete_sync(TestModel(seed=1), TASK, TOOLS)
    assert (
        complete_sync(TestModel(seed=1), TASK, TOOLS).tool_calls
        != complete_sync(TestModel(seed=2), TASK, TOOLS).tool_calls
    )


def test_final_answer_and_call_tools_options():
    assert complete_sync(TestModel(call_tools=False), TASK, TOOLS).tool_calls == []
    assert complete_sync(TestModel(final_answer="42", call_tools=False), TASK, TOOLS).content == "42"
    report = Report(title="t", items=[], confidence=0.5)
    answer = complete_sync(TestModel(final_answer=report), TASK, output_schema=Report.model_json_schema())
    assert Report.model_validate_json(answer.content) == report
    assert json.loads(complete_sync(TestModel(final_answer={"a": 1}), TASK).content) == {"a": 1}


def test_usage_is_about_four_characters_a_token():
    response = complete_sync(TestModel(final_answer="x" * 400), TASK)
    assert response.usage.completion_tokens == 100
    assert response.usage.prompt_tokens == len(json.dumps(TASK)) // 4
    assert response.usage.requests == 1 and response.model == "test"


async def test_function_model_sync_and_async_functions():
    def sync_fn(messages, tools):
        return f"{len(messages)} messages, {len(tools)} tools"

    async def async_fn(messages, tools):
        await asyncio.sleep(0)
        return [{"name": "search", "args": {"query": "q"}}, ToolCall(name="convert", args={"amount": 1}, id="mine")]

    assert (await FunctionModel(sync_fn).acomplete(TASK, TOOLS)).content == "2 messages, 2 tools"
    response = await FunctionModel(async_fn).acomplete(TASK)
    assert [c.name for c in response.tool_calls] == ["search", "convert"]
    assert response.tool_calls[0].id.startswith("call_") and response.tool_calls[1].id == "mine"
    assert complete_sync(FunctionModel(sync_fn), TASK).content == "2 messages, 0 tools"
    assert complete_sync(FunctionModel(async_fn), TASK).tool_calls[1].id == "mine"  # sync twin runs the coroutine


async def test_function_model_sync_twin_works_inside_a_running_loop():
    model = FunctionModel(lambda m, t: "from a loop", latency=0.01)
    assert complete_sync(model, TASK).content == "from a loop"


async def test_function_model_latency_does_not_block_other_tasks():
    model = FunctionModel(lambda messages, tools: "done", latency=0.2)
    started = time.perf_counter()
    replies = await asyncio.gather(*[model.acomplete([{"role": "user", "content": str(i)}]) for i in range(50)])
    elapsed = time.perf_counter() - started
    assert [r.content for r in replies] == ["done"] * 50
    assert 0.2 <= elapsed < 2.5  # fifty concurrent turns take about one latency, not fifty (10 s)
    assert model.calls == 50


def test_function_model_passes_llm_responses_through_and_counts_usage():
    canned = LLMResponse(content="canned")
    response = complete_sync(FunctionModel(lambda m, t: canned, model="fn"), TASK)
    assert response.content == "canned" and response.model == "fn" and response.usage.requests == 1
    args_as_text = complete_sync(FunctionModel(lambda m, t: [{"name": "search", "arguments": '{"query": "x"}'}]), TASK)
    assert args_as_text.tool_calls[0].args == {"query": "x"}


def test_function_model_rejects_bad_returns_clearly():
    with pytest.raises(TypeError, match="not int"):
        complete_sync(FunctionModel(lambda m, t: 3), TASK)
    with pytest.raises(TypeError, match="tool call #0"):
        complete_sync(FunctionModel(lambda m, t: [{"args": {}}]), TASK)
    with pytest.raises(TypeError, match="callable"):
        FunctionModel("not a function")
    with pytest.raises(TypeError, match=r"tool call #0 \('search'\).*JSON object string.*not valid JSON"):
        complete_sync(FunctionModel(lambda m, t: [{"name": "search", "args": "query=x"}]), TASK)
    with pytest.raises(TypeError, match="must be a JSON object, got list"):
        complete_sync(FunctionModel(lambda m, t: [{"name": "search", "args": ["x"]}]), TASK)


def test_doubles_report_calls_on_the_event_bus():
    seen = []
    unsubscribe = bus.subscribe(seen.append)
    try:
        complete_sync(TestModel(), TASK, TOOLS)
        complete_sync(FunctionModel(lambda m, t: "hi"), TASK)
    finally:
        unsubscribe()
    calls = [e.data for e in seen if e.type == "llm.call"]
    assert [(c["model"], c["tool_calls"]) for c in calls] == [("test", 2), ("function", 0)]


def test_test_model_names_each_tool_result_it_saw():
    turn = complete_sync(TestModel(), TASK, TOOLS)
    history = [
        *TASK,
        turn.raw_message,  # agents answer with the call id only, as OpenAI does
        *({"role": "tool", "tool_call_id": c.id, "content": f"result of {c.name}"} for c in turn.tool_calls),
    ]
    answer = complete_sync(TestModel(), history, TOOLS).content
    for call in turn.tool_calls:
        assert f"{call.name}: result of {call.name}" in answer
