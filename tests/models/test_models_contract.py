"""The ChatModel contract: acomplete required, astream optional (deltas, then the reply, once),
one sync helper, and wrappers that forward all of it through ``.wrapped``."""

import asyncio

import pytest

from crew.models import (
    ChatModel,
    LLMResponse,
    ModelCallInfo,
    ModelDelta,
    RateLimiter,
    Throttled,
    WrappedModel,
    complete_sync,
    innermost,
    stream_reply,
)
from crew.testing import FunctionModel, TestModel

ASK = [{"role": "user", "content": "Write the report"}]
TOOL = {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {}}}}


async def collect(stream):
    return [item async for item in stream]


def assert_stream(items, text):
    *deltas, last = items
    assert all(isinstance(d, ModelDelta) for d in deltas)
    assert isinstance(last, LLMResponse) and last.content == text
    assert "".join(d.text for d in deltas) == text
    return deltas


async def test_test_model_streams_its_answer_in_pieces():
    model = TestModel(final_answer="a short report on the weather in Oslo today")
    deltas = assert_stream(await collect(model.astream(ASK)), "a short report on the weather in Oslo today")
    assert 1 < len(deltas) <= 3
    first_turn = await collect(model.astream(ASK, [TOOL]))  # tool calls have no text to stream
    assert len(first_turn) == 1 and first_turn[0].tool_calls[0].name == "search"


async def test_function_model_streams_a_generator_as_it_yields():
    yielded = []

    async def writer(messages, tools, info):
        for piece in ("Dear ", "reader, ", "hello."):
            yielded.append(piece)
            yield piece

    model = FunctionModel(writer)
    stream = model.astream(ASK)
    first = await anext(stream)
    assert first == ModelDelta(text="Dear ") and yielded == ["Dear "]  # handed on before the rest exists
    rest = [item async for item in stream]
    assert_stream([first, *rest], "Dear reader, hello.")
    assert (await model.acomplete(ASK)).content == "Dear reader, hello."  # acomplete joins the pieces

    def gen(messages):
        yield "x "
        yield "y"

    assert_stream(await collect(FunctionModel(gen).astream(ASK)), "x y")  # sync generators stream too
    assert complete_sync(FunctionModel(gen), ASK).content == "x y"


async def test_function_model_chunks_a_plain_reply_and_counts_usage_once():
    model = FunctionModel(lambda messages, tools: "one two three four five six")
    items = await collect(model.astream(ASK))
    assert len(assert_stream(items, "one two three four five six")) == 3
    assert model.calls == 1 and items[-1].usage.requests == 1


async def test_stream_reply_falls_back_to_acomplete_for_models_without_astream():
    class Plain:
        model = "plain"
        supports_function_calling = True

        async def acomplete(self, messages, tools=None, *, output_schema=None):
            return LLMResponse(content="whole")

    assert isinstance(Plain(), ChatModel)
    items = await collect(stream_reply(Plain(), ASK))
    assert [type(i) for i in items] == [LLMResponse] and items[0].content == "whole"


def test_function_model_detects_how_many_arguments_fn_takes():
    seen = {}

    def one(messages):
        return "1"

    def two(messages, tools):
        return str(len(tools))

    def three(messages, tools, info):
        seen["info"] = info
        return info.tools[0]

    assert complete_sync(FunctionModel(one), ASK).content == "1"
    assert complete_sync(FunctionModel(two), ASK, [TOOL]).content == "1"
    assert complete_sync(FunctionModel(lambda *args: str(len(args))), ASK).content == "2"  # as before info existed
    assert complete_sync(FunctionModel(three), ASK, [TOOL]).content == "search"
    assert seen["info"] == ModelCallInfo(tools=("search",))  # outside an agent: only what the call says


def test_complete_sync_works_inside_a_running_loop():
    async def inside():
        return complete_sync(TestModel(final_answer="from a loop"), ASK)

    assert asyncio.run(inside()).content == "from a loop"


async def test_wrapped_model_forwards_the_contract_and_innermost_finds_the_model():
    base = TestModel(final_answer="deep answer here")

    class Counting(WrappedModel):
        calls = 0

        async def acomplete(self, messages, tools=None, *, output_schema=None):
            Counting.calls += 1
            return await super().acomplete(messages, tools, output_schema=output_schema)

    class CountingLimiter(RateLimiter):
        slots = 0

        def reserve(self):
            CountingLimiter.slots += 1
            return super().reserve()

    limiter = CountingLimiter(1000)
    model = Throttled(Counting(base), limiter)
    assert isinstance(model, ChatModel) and model.model == "test" and model.supports_function_calling
    assert innermost(model) is base and innermost(base) is base
    assert (await model.acomplete(ASK)).content == "deep answer here" and Counting.calls == 1
    assert_stream(await collect(model.astream(ASK)), "deep answer here")  # streams through both layers
    assert CountingLimiter.slots == 2  # one slot per call, streamed or not


def test_a_model_without_acomplete_is_not_a_chat_model():
    class Old:
        model = "old"
        supports_function_calling = True

        def complete(self, messages, tools=None, *, output_schema=None):
            return LLMResponse(content="sync only")

    assert not isinstance(Old(), ChatModel)
    with pytest.raises(ValueError, match="ChatModel"):
        from crew import Agent

        Agent(role="r", goal="g", llm=Old())


def test_a_reply_counted_from_token_counts_carries_one_request_of_usage_and_its_wire_message():
    """``LLMResponse.counted``: how both doors make a provider's reply (its usage, one request, from the counts)."""
    from crew.tools import ToolCall

    call = ToolCall(name="search", args={"q": "oslo"}, id="call_1")
    reply = LLMResponse.counted(None, [call], [], (12, 3, 15), 0.25, model="m", latency=0.5, finish_reason="tool_calls")
    assert reply.usage.model_dump() == {
        "prompt_tokens": 12,
        "completion_tokens": 3,
        "total_tokens": 15,
        "requests": 1,
        "cost": 0.25,
    }
    assert (reply.model, reply.latency, reply.finish_reason) == ("m", 0.5, "tool_calls")
    assert reply.raw_message["tool_calls"][0]["id"] == "call_1"  # the history answers the call by this id
