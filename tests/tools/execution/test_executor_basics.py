"""ToolExecutor: resolution, validation, errors, result_as_answer, context injection, events, stats."""

from __future__ import annotations

import asyncio
from typing import Literal

import pytest
from pydantic import BaseModel

from crew.common.events import bus
from crew.errors import ToolArgumentsError
from crew.tools import RunContext, ToolCall, ToolException, ToolExecutor, tool
from crew.tools.messages import ToolResult


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def search(query: str, limit: int = 3) -> list[str]:
    """Search the notes."""
    return [f"{query}-{i}" for i in range(limit)]


@tool("Weather Report")
def weather(city: str, unit: Literal["c", "f"] = "c") -> str:
    """Report the weather of a city."""
    return f"sunny in {city} ({unit})"


@pytest.fixture
def events():
    seen = []
    unsubscribe = bus.subscribe(seen.append)
    yield seen
    unsubscribe()


def test_execute_accepts_a_dict_or_a_tool_call():
    executor = ToolExecutor([add])
    from_dict = executor.execute({"name": "add", "args": {"a": 2, "b": 3}, "id": "call_1", "type": "tool_call"})
    from_call = executor.execute(ToolCall(name="add", args={"a": 4, "b": 5}, id="call_2"))
    assert (from_dict.content, from_dict.tool_call_id, from_dict.name, from_dict.status) == (
        "5",
        "call_1",
        "add",
        "success",
    )
    assert (from_call.content, from_call.raw, from_call.tool_call_id) == ("9", 9, "call_2")
    assert not from_dict.cached and not from_dict.refused and not from_dict.result_as_answer


def test_missing_call_id_gets_one_and_args_may_be_json_text():
    executor = ToolExecutor([add])
    result = executor.execute({"name": "add", "arguments": '{"a": 1, "b": "2"}'})
    assert result.content == "3"
    assert result.tool_call_id.startswith("call_")


def test_a_tool_call_in_openais_reply_format_is_accepted_as_is():
    executor = ToolExecutor([add])
    raw = {"id": "call_9", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b": 5}'}}
    result = executor.execute(raw)
    assert (result.content, result.tool_call_id, result.status) == ("6", "call_9", "success")


def test_lookup_accepts_written_name_sanitised_name_and_any_case():
    executor = ToolExecutor([weather])
    assert weather.tool_name != weather.name
    for spelling in ("Weather Report", weather.tool_name, "weather report", weather.tool_name.upper()):
        result = executor.execute({"name": spelling, "args": {"city": "Oslo"}})
        assert result.status == "success", spelling
        assert result.name == weather.tool_name
        assert result.content == "sunny in Oslo (c)"


def test_call_without_a_name_is_a_programming_error():
    with pytest.raises(ValueError, match="needs a 'name'"):
        ToolExecutor([add]).execute({"args": {"a": 1}})
    with pytest.raises(ValueError, match="needs a 'name' key holding the tool's name"):
        ToolExecutor([add]).execute({"name": None, "args": {"a": 1}})


def test_what_is_not_a_tool_or_a_cache_is_refused_when_the_executor_is_built():
    def plain(a: int) -> int:
        """Plain."""
        return a

    with pytest.raises(TypeError, match="'plain' is not a tool: decorate the function with @tool"):
        ToolExecutor([add, plain])
    with pytest.raises(TypeError, match="got the single tool 'add': wrap it in a list"):
        ToolExecutor(add)
    with pytest.raises(TypeError, match=r"takes True .*, False, or a backend with get/set/clear .*got str"):
        ToolExecutor([add], cache="memory")


def test_unknown_tool_names_the_available_tools_and_the_closest_match():
    executor = ToolExecutor([add, search])
    result = executor.execute({"name": "serch", "args": {"query": "x"}, "id": "c9"})
    assert result.status == "error"
    assert result.tool_call_id == "c9"
    assert result.content == "Unknown tool 'serch'. Available tools: add, search. Did you mean 'search'?"


def test_unknown_tool_without_any_close_match_or_any_tool():
    assert ToolExecutor([add]).execute({"name": "zzzzzz"}).content == "Unknown tool 'zzzzzz'. Available tools: add."
    assert ToolExecutor().execute({"name": "add"}).content == "Unknown tool 'add'. No tools are available."


def test_tools_argument_restricts_resolution_to_the_callers_tools():
    executor = ToolExecutor([add, search])
    refused = executor.execute({"name": "add", "args": {"a": 1, "b": 1}}, tools=[search])
    assert refused.status == "error"
    assert refused.content == "Unknown tool 'add'. Available tools: search."
    allowed = executor.execute({"name": "search", "args": {"query": "q", "limit": 1}}, tools=[search])
    assert allowed.content == '["q-0"]'


def test_a_callers_tool_unknown_to_the_executor_still_runs_and_is_counted():
    executor = ToolExecutor([add])
    result = executor.execute({"name": "search", "args": {"query": "z", "limit": 2}}, tools=[search])
    assert result.content == '["z-0", "z-1"]'
    assert executor.stats["search"].runs == 1


def test_invalid_arguments_name_each_problem_and_the_expected_arguments():
    calls = []

    @tool
    def divide(a: int, b: int) -> float:
        """Divide a by b."""
        calls.append((a, b))
        return a / b

    executor = ToolExecutor([divide])
    result = executor.execute({"name": "divide", "args": {"a": "ten"}})
    assert result.status == "error"
    assert "- a: Input should be a valid integer" in result.content
    assert "'ten'" in result.content
    assert "- b: Field required" in result.content
    assert "Expected arguments: a (integer, required), b (integer, required)." in result.content
    assert calls == []  # validation comes before anything else
    stats = executor.stats["divide"]
    assert (stats.calls, stats.errors, stats.runs) == (1, 1, 0)


def test_arguments_that_are_not_a_json_object_are_reported():
    result = ToolExecutor([add]).execute({"name": "add", "args": "a=1, b=2"})
    assert result.status == "error"
    assert "arguments:" in result.content
    assert "Expected arguments: a (integer, required), b (integer, required)." in result.content


def test_validation_error_handler_false_reraises():
    @tool(handle_validation_error=False)
    def strict(n: int) -> int:
        """Echo n."""
        return n

    with pytest.raises(ToolArgumentsError) as info:
        ToolExecutor([strict]).execute({"name": "strict", "args": {}})
    assert info.value.problems == {"n": "Field required"}


def test_invented_extra_arguments_are_dropped_and_announced(events):
    executor = ToolExecutor([add], run_id="run-7")
    result = executor.execute({"name": "add", "args": {"a": 1, "b": 2, "verbose": True, "c": 0}})
    assert result.content == "3"
    dropped = [e for e in events if e.type == "tool.args_dropped"]
    assert len(dropped) == 1
    assert dropped[0].data["tool"] == "add"
    assert dropped[0].data["dropped"] == ["verbose", "c"]
    assert dropped[0].run_id == "run-7"


def test_a_raising_tool_becomes_an_error_result_and_runs_once_per_call():
    runs = []

    @tool
    def flaky(x: int) -> int:
        """Fail on purpose."""
        runs.append(x)
        raise ValueError(f"cannot handle {x}")

    executor = ToolExecutor([flaky])
    first = executor.execute({"name": "flaky", "args": {"x": 4}})
    second = executor.execute({"name": "flaky", "args": {"x": 4}})
    assert first.status == second.status == "error"
    assert first.content == "ValueError: cannot handle 4"
    assert isinstance(first.raw, ValueError)
    assert not second.cached  # errors are never cached
    assert runs == [4, 4]  # no implicit retries, and the second identical call ran again
    stats = executor.stats["flaky"]
    assert (stats.calls, stats.runs, stats.errors, stats.cache_hits) == (2, 2, 2, 0)


def test_tool_exception_message_reaches_the_model():
    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        raise ToolException(f"no entry named {key!r}")

    result = ToolExecutor([lookup]).execute({"name": "lookup", "args": {"key": "k"}})
    assert result.status == "error"
    assert result.content == "ToolException: no entry named 'k'"


def test_custom_error_text_and_reraise_on_request():
    @tool(handle_tool_error="The service is down, try later.")
    def down(x: int) -> int:
        """Always down."""
        raise ConnectionError("refused")

    @tool(handle_tool_error=False)
    def loud(x: int) -> int:
        """Raise to the caller."""
        raise KeyError("missing")

    executor = ToolExecutor([down, loud])
    assert executor.execute({"name": "down", "args": {"x": 1}}).content == "The service is down, try later."
    with pytest.raises(KeyError, match="missing"):
        executor.execute({"name": "loud", "args": {"x": 1}})
    assert executor.stats["loud"].errors == 1


async def test_reraise_from_the_async_path():
    @tool(handle_tool_error=False)
    async def loud(x: int) -> int:
        """Raise to the caller."""
        raise KeyError("missing")

    with pytest.raises(KeyError):
        await ToolExecutor([loud]).aexecute({"name": "loud", "args": {"x": 1}})


def test_result_as_answer_flag_only_on_success_and_kept_on_cache_hits():
    @tool(result_as_answer=True)
    def final(text: str) -> str:
        """Give the final answer."""
        if text == "bad":
            raise RuntimeError("no")
        return text.upper()

    executor = ToolExecutor([final])
    ok = executor.execute({"name": "final", "args": {"text": "done"}})
    again = executor.execute({"name": "final", "args": {"text": "done"}})
    failed = executor.execute({"name": "final", "args": {"text": "bad"}})
    invalid = executor.execute({"name": "final", "args": {}})
    assert ok.result_as_answer and ok.content == "DONE"
    assert again.cached and again.result_as_answer
    assert not failed.result_as_answer and failed.status == "error"
    assert not invalid.result_as_answer
    assert not ToolExecutor([add]).execute({"name": "add", "args": {"a": 1, "b": 1}}).result_as_answer


def test_every_qualifying_result_of_a_turn_carries_the_flag_in_the_calls_order():
    @tool(result_as_answer=True)
    def verdict(n: int) -> str:
        """Give a verdict."""
        if n < 0:
            raise ValueError("negative")
        return f"verdict {n}"

    results = ToolExecutor([verdict, add]).execute_many(
        [
            {"name": "verdict", "args": {"n": 2}},
            {"name": "add", "args": {"a": 1, "b": 1}},
            {"name": "verdict", "args": {"n": -1}},
            {"name": "verdict", "args": {"n": 1}},
        ]
    )
    assert [(r.content, r.result_as_answer) for r in results] == [
        ("verdict 2", True),
        ("2", False),
        ("ValueError: negative", False),
        ("verdict 1", True),
    ]


def test_content_and_artifact_keeps_the_artifact_out_of_the_content():
    @tool(response_format="content_and_artifact")
    def chart(n: int) -> tuple[str, list[int]]:
        """Draw a chart."""
        return f"chart of {n} points", list(range(n))

    executor = ToolExecutor([chart])
    result = executor.execute({"name": "chart", "args": {"n": 3}})
    assert (result.content, result.artifact) == ("chart of 3 points", [0, 1, 2])
    hit = executor.execute({"name": "chart", "args": {"n": 3}})
    assert hit.cached and hit.artifact == [0, 1, 2]


def test_content_and_artifact_tool_that_returns_no_pair_is_an_error():
    @tool(response_format="content_and_artifact")
    def broken(n: int) -> str:
        """Forget the artifact."""
        return "only text"

    result = ToolExecutor([broken]).execute({"name": "broken", "args": {"n": 1}})
    assert result.status == "error"
    assert "content_and_artifact" in result.content


def test_run_context_is_filled_injected_and_never_part_of_the_cache_key():
    seen: list[RunContext] = []

    @tool
    def whoami(prefix: str, ctx: RunContext) -> str:
        """Say who runs this."""
        seen.append(ctx)
        return f"{prefix}:{ctx.task}:{ctx.agent}:{ctx.run_id}"

    assert "ctx" not in whoami.to_openai_tool()["function"]["parameters"]["properties"]
    executor = ToolExecutor([whoami], run_id="run-1")
    first = executor.execute(
        {"name": "whoami", "args": {"prefix": "p"}, "id": "c1"},
        context=RunContext(task="write", agent="writer", metadata={"k": 1}),
    )
    assert first.content == "p:write:writer:run-1"
    assert (seen[0].tool_call_id, seen[0].metadata) == ("c1", {"k": 1})
    # a model that sends the injected name gets no say over it
    second = executor.execute(
        {"name": "whoami", "args": {"prefix": "p", "ctx": "forged"}, "id": "c2"},
        context=RunContext(task="edit", agent="editor"),
    )
    assert second.cached and second.content == first.content
    assert len(seen) == 1
    third = executor.execute({"name": "whoami", "args": {"prefix": "q"}, "id": "c3"})
    assert third.content == "q:None:None:run-1"
    assert seen[1].tool_call_id == "c3"


async def test_run_context_reaches_async_tools_through_aexecute():
    @tool
    async def where(ctx: RunContext) -> str:
        """Report the task."""
        return f"{ctx.task}/{ctx.tool_call_id}"

    result = await ToolExecutor([where]).aexecute(
        {"name": "where", "args": {}, "id": "c5"}, context=RunContext(task="t1")
    )
    assert result.content == "t1/c5"


def test_async_tools_run_from_sync_execute_with_and_without_a_running_loop():
    @tool
    async def slow_double(x: int) -> int:
        """Double x after a pause."""
        await asyncio.sleep(0.001)
        return 2 * x

    executor = ToolExecutor([slow_double], cache=False)
    assert executor.execute({"name": "slow_double", "args": {"x": 4}}).content == "8"

    async def inside_a_loop() -> ToolResult:
        return executor.execute({"name": "slow_double", "args": {"x": 5}})

    assert asyncio.run(inside_a_loop()).content == "10"


async def test_aexecute_runs_sync_and_async_tools():
    @tool
    async def shout(text: str) -> str:
        """Shout."""
        return text.upper() + "!"

    executor = ToolExecutor([add, shout])
    assert (await executor.aexecute({"name": "add", "args": {"a": 1, "b": 2}})).content == "3"
    assert (await executor.aexecute({"name": "shout", "args": {"text": "hi"}})).content == "HI!"
    assert (await executor.aexecute({"name": "nope"})).status == "error"


def test_tool_call_events_carry_the_outcome(events):
    executor = ToolExecutor([add], run_id="run-42")
    context = RunContext(task="sum", agent="math")
    executor.execute({"name": "add", "args": {"a": 1, "b": 2}}, context=context)
    executor.execute({"name": "add", "args": {"a": 1, "b": 2}}, context=context)
    executor.execute({"name": "mul", "args": {}}, context=context)
    calls = [e for e in events if e.type == "tool.call"]
    assert [(e.data["tool"], e.data["status"], e.data["cached"]) for e in calls] == [
        ("add", "success", False),
        ("add", "success", True),
        ("mul", "error", False),
    ]
    first = calls[0]
    assert first.run_id == "run-42"
    assert (first.data["task"], first.data["agent"], first.data["refused"]) == ("sum", "math", False)
    assert first.data["args"] == {"a": 1, "b": 2}
    assert first.data["duration"] > 0


def test_stats_count_every_outcome_and_are_a_snapshot():
    @tool(max_usage_count=1)
    def once(x: int) -> int:
        """Usable once."""
        return x

    executor = ToolExecutor([add, once])
    assert executor.stats["add"].calls == 0  # registered tools start at zero
    executor.execute({"name": "add", "args": {"a": 1, "b": 2}})
    executor.execute({"name": "add", "args": {"a": 1, "b": 2}})
    executor.execute({"name": "add", "args": {"a": "x", "b": 2}})
    executor.execute({"name": "once", "args": {"x": 1}})
    executor.execute({"name": "once", "args": {"x": 2}})
    snapshot = executor.stats
    add_stats, once_stats = snapshot["add"], snapshot["once"]
    assert (add_stats.calls, add_stats.cache_hits, add_stats.runs, add_stats.errors) == (3, 1, 1, 1)
    assert (once_stats.calls, once_stats.runs, once_stats.refused, once_stats.errors) == (2, 1, 1, 0)
    assert add_stats.run_seconds > 0
    executor.execute({"name": "add", "args": {"a": 5, "b": 5}})
    assert snapshot["add"].calls == 3 and executor.stats["add"].calls == 4
    assert executor.usage("add") == 2 and executor.usage("once") == 1 and executor.usage("nothing") == 0


def test_register_is_idempotent_and_keeps_the_first_tool_of_a_name():
    executor = ToolExecutor([add])
    executor.register([add, add])

    @tool("add")
    def other_add(a: int, b: int) -> int:
        """Another add."""
        return 0

    executor.register([other_add])
    assert executor.tools == [add]
    assert executor.execute({"name": "add", "args": {"a": 1, "b": 1}}).content == "2"
    # a caller holding its own instance of the name runs that instance
    assert executor.execute({"name": "add", "args": {"a": 2, "b": 2}}, tools=[other_add]).content == "0"


def test_different_tools_under_one_name_never_share_cache_usage_or_stats():
    """Two agents' unrelated tools both named ``lookup``: each caller gets its own tool's result,
    never the other's cached one, and each tool's limit counts its own runs."""

    @tool("lookup", max_usage_count=1)
    def weather(city: str) -> str:
        """Weather of a city."""
        return f"sunny in {city}"

    @tool("lookup")
    def population(city: str) -> str:
        """Population of a city."""
        return f"1M in {city}"

    executor = ToolExecutor([weather, population])
    call = {"name": "lookup", "args": {"city": "Oslo"}}
    assert executor.execute(call, tools=[weather]).content == "sunny in Oslo"
    second = executor.execute(call, tools=[population])
    assert (second.content, second.cached, second.name) == ("1M in Oslo", False, "lookup")
    assert executor.execute(call, tools=[population]).cached  # its own entry, once it has one
    assert executor.execute(call, tools=[weather]).cached  # a hit: weather's one run is still its only one
    assert not executor.execute({"name": "lookup", "args": {"city": "Rome"}}, tools=[population]).refused
    assert executor.execute({"name": "lookup", "args": {"city": "Rome"}}, tools=[weather]).refused
    stats = executor.stats
    assert (stats["lookup"].runs, stats["lookup"].refused) == (1, 1)
    assert (stats["lookup#2"].runs, stats["lookup#2"].cache_hits) == (2, 1)


def test_copies_of_one_tool_share_its_name_and_cache():
    """Each agent's copy of one tool (a copied crew, YAML building one per agent) is the same tool."""
    import copy

    runs = []

    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        runs.append(city)
        return city.upper()

    copies = [lookup, lookup.model_copy(), copy.deepcopy(lookup)]
    executor = ToolExecutor(copies)
    results = [executor.execute({"name": "lookup", "args": {"city": "oslo"}}, tools=[one]) for one in copies]
    assert [r.cached for r in results] == [False, True, True] and runs == ["oslo"]
    assert list(executor.stats) == ["lookup"]


class Point(BaseModel):
    x: int
    y: int


def test_nested_model_arguments_work_and_cache():
    runs = []

    @tool
    def norm(p: Point) -> int:
        """Manhattan norm of a point."""
        runs.append(p)
        return abs(p.x) + abs(p.y)

    executor = ToolExecutor([norm])
    assert executor.execute({"name": "norm", "args": {"p": {"x": 3, "y": -4}}}).content == "7"
    assert executor.execute({"name": "norm", "args": {"p": {"y": "-4", "x": 3}}}).cached
    assert len(runs) == 1 and isinstance(runs[0], Point)


def test_a_result_dumps_and_loads_as_a_field_and_keeps_its_raw_value_out() -> None:
    import pickle

    from pydantic import BaseModel

    @tool
    def pair(n: int) -> dict:
        """A dict, so raw and content differ."""
        return {"n": n}

    class Holder(BaseModel):
        results: dict[str, ToolResult]

    executor = ToolExecutor([pair])
    result = executor.execute(ToolCall(name="pair", args={"n": 2}, id="call_1"))
    assert result.raw == {"n": 2} and result.content == '{"n": 2}'
    dumped = result.model_dump()
    assert "raw" not in dumped and dumped["tool_call_id"] == "call_1" and dumped["status"] == "success"
    assert '"raw"' not in result.model_dump_json() and result.model_dump(include={"name"}) == {"name": "pair"}
    loaded = Holder.model_validate_json(Holder(results={"call_1": result}).model_dump_json()).results["call_1"]
    assert (loaded.content, loaded.name, loaded.raw, loaded.duration) == (result.content, "pair", None, result.duration)
    assert pickle.loads(pickle.dumps(result)) == result
    assert (
        ToolResult.model_validate(dumped) == loaded
        and ToolResult.model_validate_json(result.model_dump_json()) == loaded
    )
    edited = result.model_copy(update={"content": "edited"})
    assert (edited.content, edited.raw, result.content) == ("edited", {"n": 2}, '{"n": 2}')
    assert result.model_copy(deep=True).raw is not result.raw
    with pytest.raises(ValueError, match="status"):
        ToolResult(content="x", tool_call_id="c", name="pair", status="odd")  # type: ignore[arg-type]
