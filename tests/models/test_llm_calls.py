"""LLM through both doors (real litellm, the native transport) against the local server: replies, tools, usage."""

import asyncio
import json

import pytest

from crew.common.usage import Usage
from crew.models import LLM, LLMResponse, ModelDelta, complete_sync
from crew.models.pricing import model_info
from crew.testing import Reply

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def local_llm(server, transport, **kw) -> LLM:
    return LLM(
        "openai/gpt-4o-mini", api_base=server.url, api_key="sk-test", retry_base_delay=0.01, transport=transport, **kw
    )


def price(prompt: int, completion: int) -> float:
    """What litellm's bundled table says the call costs (the native door reads the same table as data)."""
    prices = model_info("gpt-4o-mini")
    assert prices is not None
    return prompt * prices["input_cost_per_token"] + completion * prices["output_cost_per_token"]


async def test_text_reply_usage_cost_and_payload(openai_server, transport):
    openai_server.enqueue(Reply.text("Paris.", prompt_tokens=120, completion_tokens=30))
    llm = local_llm(openai_server, transport, temperature=0.2, max_tokens=64, seed=7)
    response = await llm.acomplete([{"role": "user", "content": "Capital of France?"}])

    assert response.content == "Paris."
    assert response.tool_calls == [] and response.finish_reason == "stop"
    assert response.raw_message == {"role": "assistant", "content": "Paris."}
    assert response.usage.prompt_tokens == 120 and response.usage.completion_tokens == 30
    assert response.usage.total_tokens == 150 and response.usage.requests == 1
    assert response.usage.cost == pytest.approx(price(120, 30))
    assert response.model == "openai/gpt-4o-mini" and response.latency > 0

    [request] = openai_server.requests
    assert request.body["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert request.body["temperature"] == 0.2 and request.body["max_tokens"] == 64 and request.body["seed"] == 7
    assert "tools" not in request.body and not request.stream
    if transport == "litellm":
        assert request.headers["x-stainless-retry-count"] == "0"  # the SDK does not retry on its own


async def test_native_tool_call_is_parsed_and_round_trips(openai_server, transport):
    openai_server.enqueue(
        Reply.tools({"name": "get_weather", "args": {"city": "Oslo"}, "id": "call_1"}),
        Reply.text("It is 3 degrees in Oslo."),
    )
    llm = local_llm(openai_server, transport)
    messages = [{"role": "user", "content": "Weather in Oslo?"}]
    first = await llm.acomplete(messages, [WEATHER_TOOL])

    assert first.content is None and first.finish_reason == "tool_calls"
    assert [(c.name, c.args, c.id) for c in first.tool_calls] == [("get_weather", {"city": "Oslo"}, "call_1")]
    assert first.raw_message["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Oslo"}'}

    messages += [first.raw_message, {"role": "tool", "tool_call_id": "call_1", "content": "3 degrees"}]
    second = await llm.acomplete(messages, [WEATHER_TOOL])
    assert second.content == "It is 3 degrees in Oslo."

    sent = openai_server.requests[1].body
    assert sent["tools"] == [WEATHER_TOOL]
    assert sent["messages"][1]["tool_calls"][0]["id"] == "call_1"
    assert sent["messages"][2] == {"role": "tool", "tool_call_id": "call_1", "content": "3 degrees"}


async def test_parallel_tool_calls_keep_order_and_ids(openai_server, transport):
    cities = ["Oslo", "Lima", "Pune", "Kyiv"]
    openai_server.enqueue(
        Reply.tools(*[{"name": "get_weather", "args": {"city": c}} for c in cities], content="Checking all four.")
    )
    response = await local_llm(openai_server, transport).acomplete(
        [{"role": "user", "content": "4 cities"}], [WEATHER_TOOL]
    )

    assert response.content == "Checking all four."
    assert [c.args["city"] for c in response.tool_calls] == cities
    ids = [c.id for c in response.tool_calls]
    assert len(set(ids)) == 4
    assert [c["id"] for c in response.raw_message["tool_calls"]] == ids


async def test_malformed_tool_arguments_become_invalid_tool_calls(openai_server, transport):
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_ok",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
                        },
                        {
                            "id": "call_bad",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": "{city: Rome"},
                        },
                        {
                            "id": "call_list",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": "[1, 2]"},
                        },
                        {
                            "id": "call_twice",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": json.dumps('{"city": "Bern"}')},
                        },
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
    }
    openai_server.enqueue(Reply.raw(body))  # arguments exactly as a sloppy provider wrote them
    response = await local_llm(openai_server, transport).acomplete([{"role": "user", "content": "x"}], [WEATHER_TOOL])

    assert [(c.id, c.args) for c in response.tool_calls] == [
        ("call_ok", {"city": "Rome"}),
        ("call_twice", {"city": "Bern"}),
    ]
    invalid = {c.id: c for c in response.invalid_tool_calls}
    assert set(invalid) == {"call_bad", "call_list"}
    assert invalid["call_bad"].arguments == "{city: Rome" and "not valid JSON" in invalid["call_bad"].error
    assert "JSON object" in invalid["call_list"].error
    # every id stays in the assistant message, so the agent can answer each one
    assert {c["id"] for c in response.raw_message["tool_calls"]} == {"call_ok", "call_twice", "call_bad", "call_list"}


@pytest.mark.parametrize("how", ["acomplete", "sync", "astream"])
async def test_streaming_assembles_content_tool_calls_and_usage(openai_server, transport, how):
    args = {"city": "São Paulo", "units": "metric", "days": [1, 2, 3]}
    openai_server.enqueue(
        Reply.tools(
            {"name": "get_weather", "args": args, "id": "call_s"},
            {"name": "get_weather", "args": {"city": "Nice"}, "id": "call_t"},
            content="Let me look that up for you, one moment.",
            prompt_tokens=40,
            completion_tokens=25,
        )
    )
    llm = local_llm(openai_server, transport, stream=how != "astream")  # astream streams whatever the flag
    messages = [{"role": "user", "content": "weather"}]
    if how == "sync":
        response = await asyncio.to_thread(complete_sync, llm, messages, [WEATHER_TOOL])
    elif how == "acomplete":
        response = await llm.acomplete(messages, [WEATHER_TOOL])
    else:
        items = [item async for item in llm.astream(messages, [WEATHER_TOOL])]
        *deltas, response = items
        assert all(isinstance(d, ModelDelta) for d in deltas) and len(deltas) > 1  # the server sends 8-char pieces
        assert "".join(d.text for d in deltas) == "Let me look that up for you, one moment."
        assert isinstance(response, LLMResponse)

    assert openai_server.requests[0].stream
    assert response.content == "Let me look that up for you, one moment."
    assert [(c.id, c.args) for c in response.tool_calls] == [("call_s", args), ("call_t", {"city": "Nice"})]
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (40, 25)
    assert response.usage.cost == pytest.approx(price(40, 25))
    assert response.finish_reason == "tool_calls"


def test_sync_complete_and_usage_summed(openai_server, transport):
    figures = [(10, 2), (30, 4), (50, 8)]
    openai_server.enqueue(
        *[Reply.text(f"answer {i}", prompt_tokens=p, completion_tokens=c) for i, (p, c) in enumerate(figures)]
    )
    llm = local_llm(openai_server, transport)
    responses = [complete_sync(llm, [{"role": "user", "content": f"q{i}"}]) for i in range(3)]

    assert [r.content for r in responses] == ["answer 0", "answer 1", "answer 2"]
    total = Usage.total([r.usage for r in responses])
    assert (total.prompt_tokens, total.completion_tokens, total.total_tokens, total.requests) == (90, 14, 104, 3)
    assert total.cost == pytest.approx(sum(r.usage.cost for r in responses)) and total.cost > 0


async def test_many_concurrent_calls_each_get_their_own_reply(openai_server, transport):
    openai_server.handler = lambda request: Reply.text("echo " + request.messages[-1]["content"])
    llm = local_llm(openai_server, transport)
    replies = await asyncio.gather(*[llm.acomplete([{"role": "user", "content": str(i)}]) for i in range(20)])
    assert [r.content for r in replies] == [f"echo {i}" for i in range(20)]
    assert len(openai_server.requests) == 20


def test_function_calling_flag_and_litellm_lookup():
    assert LLM("openai/gpt-4o-mini").supports_function_calling is True
    assert LLM("openai/gpt-4o-mini", function_calling=False).supports_function_calling is False
    assert LLM("ollama/some-model", function_calling=True).supports_function_calling is True
    assert LLM("nosuchprovider/whatever-model").supports_function_calling is False


def test_response_builds_its_raw_message():
    response = LLMResponse(content="ok")
    assert response.raw_message == {"role": "assistant", "content": "ok"}


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "gpt-4o-mini", "openai/no-such-model-xyz"])
def test_both_doors_agree_on_function_calling(model):
    assert (
        LLM(model, transport="native").supports_function_calling
        == LLM(model, transport="litellm").supports_function_calling
    )


async def test_astream_yields_text_as_it_arrives_then_the_response_once(openai_server, transport):
    text = "A long answer that arrives in several pieces."
    openai_server.enqueue(
        Reply.tools({"name": "get_weather", "args": {"city": "Oslo"}, "id": "call_x"}, content=text, prompt_tokens=9)
    )
    items = [item async for item in local_llm(openai_server, transport).astream(MESSAGES, [WEATHER_TOOL])]

    deltas, final = items[:-1], items[-1]
    assert all(isinstance(d, ModelDelta) for d in deltas) and len(deltas) > 1
    assert "".join(d.text for d in deltas) == text
    assert isinstance(final, LLMResponse) and final.content == text
    assert [(c.name, c.args, c.id) for c in final.tool_calls] == [("get_weather", {"city": "Oslo"}, "call_x")]
    assert final.usage.prompt_tokens == 9 and final.usage.cost == pytest.approx(price(9, final.usage.completion_tokens))
    request = openai_server.requests[0]
    assert request.stream and request.body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
async def test_an_empty_reply_is_an_empty_answer(openai_server, transport, stream):
    openai_server.enqueue(Reply.text("", completion_tokens=0))
    response = await local_llm(openai_server, transport, stream=stream).acomplete(MESSAGES)
    assert response.content == "" and response.tool_calls == [] and response.finish_reason == "stop"


async def test_tool_choice_parallel_calls_and_response_format_reach_the_server(openai_server, transport):
    openai_server.enqueue(Reply.text('{"city": "Oslo"}'), Reply.text("plain"))
    schema = {"type": "json_schema", "json_schema": {"name": "city", "schema": {"type": "object"}}}
    llm = local_llm(openai_server, transport, tool_choice="required", parallel_tool_calls=False, response_format=schema)
    await llm.acomplete(MESSAGES, [WEATHER_TOOL])
    await llm.acomplete(MESSAGES)  # no tools: tool options are not sent
    with_tools, without = (r.body for r in openai_server.requests)
    assert with_tools["tool_choice"] == "required" and with_tools["parallel_tool_calls"] is False
    assert with_tools["response_format"] == schema and without["response_format"] == schema
    assert "tool_choice" not in without and "tools" not in without


async def test_llm_call_events_name_the_transport(openai_server, transport):
    from crew.common.events import bus

    seen = []
    unsubscribe = bus.subscribe(seen.append)
    try:
        openai_server.enqueue(Reply.text("ok"))
        await local_llm(openai_server, transport).acomplete(MESSAGES)
    finally:
        unsubscribe()
    [call] = [e for e in seen if e.type == "llm.call"]
    assert call.data["transport"] == transport


MESSAGES = [{"role": "user", "content": "hello"}]


async def test_a_stream_broken_after_text_is_an_error_not_a_repeated_answer(openai_server, transport):
    from crew.errors import LLMError

    openai_server.enqueue(Reply.text("The first part of a long answer, then more.", cut_after=3))
    openai_server.enqueue(Reply.text("never asked for"))
    seen: list[object] = []
    with pytest.raises(LLMError, match=r"1 attempt\(s\) \(the stream broke after text was delivered\)"):
        async for item in local_llm(openai_server, transport, num_retries=2).astream(MESSAGES):
            seen.append(item)
    assert seen and all(isinstance(d, ModelDelta) for d in seen)  # the text that came before the break
    assert len(openai_server.requests) == 1  # not retried: the caller already has part of the answer


async def test_a_stream_broken_before_any_text_is_retried(openai_server, transport):
    openai_server.enqueue(Reply.text("lost", cut_after=0), Reply.text("second try"))
    items = [item async for item in local_llm(openai_server, transport).astream(MESSAGES)]
    assert isinstance(items[-1], LLMResponse) and items[-1].content == "second try"
    assert len(openai_server.requests) == 2


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_reply_of_tool_calls_only_has_no_content_on_either_door(openai_server, transport, stream):
    """Streamed, litellm said "" where the native door (and OpenAI) say null."""
    openai_server.enqueue(Reply.tools({"name": "get_weather", "args": {"city": "Nice"}, "id": "call_n"}))
    response = await local_llm(openai_server, transport, stream=stream).acomplete(
        [{"role": "user", "content": "weather"}], [WEATHER_TOOL]
    )
    assert response.content is None and [c.id for c in response.tool_calls] == ["call_n"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_the_llm_call_event_carries_what_was_sent_on_either_door(openai_server, transport, stream):
    """The run store's transcript comes from it; litellm's non-streamed calls sent none."""
    from crew.common.events import bus

    seen = []
    unsubscribe = bus.subscribe(seen.append)
    try:
        openai_server.enqueue("Paris.")
        sent = [{"role": "user", "content": "Capital of France?"}]
        await local_llm(openai_server, transport, stream=stream).acomplete(sent)
    finally:
        unsubscribe()
    call = next(e for e in seen if e.type == "llm.call")
    assert call.data["messages"] == sent and call.data["transport"] == transport


async def test_a_setting_changed_after_a_call_is_read_by_the_next(transport):
    """An LLM keeps the door it opened while its fields are unchanged; one set later (the model, the
    server, a provider argument) is what the next call sends."""
    from crew.testing import OpenAIServer

    with (
        OpenAIServer(handler=lambda r: Reply.text("a")) as first,
        OpenAIServer(handler=lambda r: Reply.text("b")) as second,
    ):
        llm = local_llm(first, transport, temperature=0.1)
        assert (await llm.acomplete([{"role": "user", "content": "hi"}])).content == "a"
        llm.api_base, llm.temperature, llm.model = second.url, 0.7, "openai/gpt-4o"
        llm.seed = 3  # a provider argument, set on the LLM as an extra
        assert (await llm.acomplete([{"role": "user", "content": "hi"}])).content == "b"
    [sent] = second.requests
    assert sent.body["temperature"] == 0.7 and sent.body["model"] == "gpt-4o" and sent.body["seed"] == 3
    assert len(first.requests) == 1
