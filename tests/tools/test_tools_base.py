"""BaseTool subclasses, run/arun, usage limits under races, invoke/ainvoke and error handling."""

import asyncio
import copy
import threading
import time
from abc import ABC
from datetime import date

import pytest
from pydantic import BaseModel

from crew.errors import ToolArgumentsError, ToolDefinitionError, ToolException
from crew.tools import BaseTool, RunContext, Tool, ToolCall, ToolResult, tool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class Search(BaseTool):
    """Search the web for a query."""

    name: str = "web search"

    def _run(self, query: str, limit: int = 3, *args: object, ctx: RunContext, **kwargs: object) -> str:
        return f"{query}|{limit}|{ctx.task}"


class Doubler(BaseTool):
    name: str = "doubler"
    description: str = "Double a number."

    async def _arun(self, x: int) -> int:
        await asyncio.sleep(0)
        return x * 2


class Passthrough(BaseTool):
    name: str = "passthrough"
    description: str = "Schema from _arun because _run takes nothing."

    def _run(self, *args: object, **kwargs: object) -> str:
        return f"sync {kwargs}"

    async def _arun(self, city: str) -> str:
        return f"async {city}"


class CityInput(BaseModel):
    city: str


# -- building class tools -------------------------------------------------------------


def test_class_tool_schema_from_run_signature():
    search = Search()
    assert search.description == "Search the web for a query."  # the class docstring
    assert search.tool_name == "web_search"
    assert search.args == {"query": {"type": "string"}, "limit": {"default": 3, "type": "integer"}}
    assert search.injected_params == frozenset({"ctx"})
    assert search.run(query="q") == "q|3|None"
    assert search.run("q", 7, ctx=RunContext(task="T")) == "q|7|T"


def test_class_tool_schema_from_arun_when_run_takes_nothing():
    tool_ = Passthrough()
    assert tool_.args == {"city": {"type": "string"}}
    assert tool_.is_async is False
    assert tool_.run(city="Nara") == "sync {'city': 'Nara'}"
    assert asyncio.run(tool_.arun(city="Nara")) == "async Nara"


def test_async_only_class_tool():
    doubler = Doubler()
    assert doubler.is_async is True
    assert doubler.args == {"x": {"type": "integer"}}
    assert doubler.run(x=4) == 8
    assert asyncio.run(doubler.arun(x="5")) == 10


def test_class_tool_with_explicit_schema_and_overrides():
    class Weather(BaseTool):
        name: str = "weather"
        description: str = "Weather."
        args_schema: type[BaseModel] = CityInput

        def _run(self, city: str) -> str:
            return f"sunny in {city}"

    weather = Weather(max_usage_count=1, result_as_answer=True)
    assert weather.args_schema is CityInput
    assert weather.run(city="Kobe") == "sunny in Kobe"
    assert weather.run(city="Kobe") == (
        "Tool 'weather' has reached its usage limit of 1 times and cannot be used anymore."
    )
    as_dict = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    other = Weather(name="w2", description="Other.", args_schema=as_dict)
    assert other.run(city="x") == "sunny in x"


def test_class_tool_definition_errors():
    class NoImpl(BaseTool):
        name: str = "n"
        description: str = "d"

    with pytest.raises(ToolDefinitionError, match=r"^NoImpl must implement _run and/or _arun"):
        NoImpl()
    with pytest.raises(ToolDefinitionError, match="BaseTool must implement _run and/or _arun"):
        BaseTool(name="x", description="y")

    class Nameless(BaseTool):
        description: str = "d"

        def _run(self) -> str:
            return ""

    with pytest.raises(ToolDefinitionError, match=r"^Nameless needs a non-empty name$"):
        Nameless()

    class Undescribed(BaseTool):
        name: str = "undescribed"

        def _run(self, x: int) -> int:
            return x

    with pytest.raises(ToolDefinitionError, match=r"^Tool 'undescribed' has no description"):
        Undescribed()
    assert Undescribed(description="given").description == "given"
    with pytest.raises(
        ToolDefinitionError, match=r"^Invalid tool 'undescribed': cache_function: Input should be callable"
    ):
        Undescribed(description="d", cache_function="nope")


def test_class_tool_max_usage_count_zero_or_negative_rejected_when_built():
    for bad in (0, -1):
        with pytest.raises(
            ToolDefinitionError,
            match=rf"^Tool 'web search': max_usage_count must be a positive "
            rf"integer or None, got {bad}$",
        ):
            Search(max_usage_count=bad)
        with pytest.raises(ValueError, match="max_usage_count"):  # ToolDefinitionError is a ValueError
            Tool(name="t", description="d", func=lambda: 1, max_usage_count=bad)
    assert Search(max_usage_count=1).max_usage_count == 1 and Search().max_usage_count is None


def test_fields_and_their_defaults():
    search = Search()
    assert isinstance(search, BaseModel) and issubclass(BaseTool, ABC)  # a pydantic model and an abstract base
    assert (
        search.result_schema,
        search.env_vars,
        search.result_as_answer,
        search.max_usage_count,
        search.current_usage_count,
    ) == (None, [], False, None, 0)
    assert issubclass(search.args_schema, BaseModel) and search.cache_function({"query": "q"}, "r") is True


def test_env_vars():
    search = Search(env_vars=["SEARCH_KEY", {"name": "REGION", "required": False, "default": "eu"}])
    assert [(v.name, v.required, v.default) for v in search.env_vars] == [
        ("SEARCH_KEY", True, None),
        ("REGION", False, "eu"),
    ]


# -- run: validation -------------------------------------------------------------------


def test_run_validates_and_coerces():
    assert add.run(a="1", b=2.0) == 3
    assert add.run(1, b=2) == 3
    assert add.run(a=1, b=2, invented=True) == 3


def test_run_validation_error_names_tool_problem_and_expected_args():
    with pytest.raises(ValueError) as info:
        add.run(a="x")
    exc = info.value
    assert isinstance(exc, ToolArgumentsError)
    assert str(exc) == (
        "Tool 'add' received invalid arguments:\n"
        "  - a: Input should be a valid integer, unable to parse string as an integer (got 'x')\n"
        "  - b: Field required\n"
        "Expected arguments: a (integer, required), b (integer, required)."
    )
    assert exc.tool == "add"
    assert exc.problems == {
        "a": "Input should be a valid integer, unable to parse string as an integer (got 'x')",
        "b": "Field required",
    }


def test_run_with_too_many_positional_arguments():
    with pytest.raises(TypeError, match="Tool 'add' takes 2 positional arguments, got 3"):
        add.run(1, 2, 3)


def test_validation_error_on_non_dict_and_nested_locations():
    class Item(BaseModel):
        qty: int

    @tool
    def order(items: list[Item]) -> int:
        """Order items."""
        return sum(i.qty for i in items)

    with pytest.raises(ToolArgumentsError) as info:
        order.validate_args({"items": [{"qty": 1}, {"qty": "many"}]})
    assert list(info.value.problems) == ["items.1.qty"]
    with pytest.raises(ToolArgumentsError) as info:
        order.validate_args(["not", "a", "dict"])
    assert list(info.value.problems) == ["arguments"]


# -- run: usage limits ---------------------------------------------------------------


def _counted_tool(limit: int, delay: float = 0.0) -> tuple[Tool, list[int]]:
    runs: list[int] = []
    lock = threading.Lock()

    def work(n: int) -> int:
        """Count a run."""
        if delay:
            time.sleep(delay)
        with lock:
            runs.append(n)
        return n

    return tool("work", work, max_usage_count=limit), runs


def test_usage_limit_exact_message_and_no_run():
    limited, runs = _counted_tool(2)
    assert limited.run(n=1) == 1
    assert limited.run(n=2) == 2
    assert limited.run(n=3) == "Tool 'work' has reached its usage limit of 2 times and cannot be used anymore."
    assert runs == [1, 2]
    assert limited.current_usage_count == 2
    limited.reset_usage_count()
    assert limited.current_usage_count == 0
    assert limited.run(n=4) == 4


def test_invalid_arguments_do_not_consume_a_slot():
    limited, runs = _counted_tool(1)
    with pytest.raises(ValueError):
        limited.run(n="x")
    assert limited.current_usage_count == 0 and runs == []
    assert limited.run(n=1) == 1
    assert runs == [1]


def test_usage_counted_without_a_limit():
    unlimited, _ = _counted_tool(limit=None)
    for i in range(5):
        unlimited.run(n=i)
    assert unlimited.current_usage_count == 5


def test_sixty_four_threads_race_for_ten_slots():
    limited, runs = _counted_tool(10, delay=0.001)
    barrier = threading.Barrier(64)
    results: list[object] = []
    results_lock = threading.Lock()

    def racer(i: int) -> None:
        barrier.wait()
        out = limited.run(n=i)
        with results_lock:
            results.append(out)

    threads = [threading.Thread(target=racer, args=(i,)) for i in range(64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(runs) == 10
    assert limited.current_usage_count == 10
    refused = [r for r in results if isinstance(r, str)]
    assert len(refused) == 54
    assert set(refused) == {"Tool 'work' has reached its usage limit of 10 times and cannot be used anymore."}
    assert sorted(r for r in results if isinstance(r, int)) == sorted(runs)


async def test_asyncio_tasks_race_for_ten_slots():
    runs: list[int] = []

    @tool(max_usage_count=10)
    async def work(n: int) -> int:
        """Count a run."""
        await asyncio.sleep(0.001)
        runs.append(n)
        return n

    results = await asyncio.gather(*(work.arun(n=i) for i in range(64)))
    assert len(runs) == 10
    assert sum(isinstance(r, str) for r in results) == 54


def test_copies_count_separately_and_have_their_own_lock():
    limited, _ = _counted_tool(3)
    limited.run(n=1)
    clone = copy.deepcopy(limited)
    clone.run(n=2)
    assert (limited.current_usage_count, clone.current_usage_count) == (1, 2)
    assert clone.__pydantic_private__["_rt"].usage.lock is not limited.__pydantic_private__["_rt"].usage.lock


# -- run / arun: sync, async, coroutine results ----------------------------------------


def test_coroutine_result_is_awaited():
    async def later(x: int) -> int:
        await asyncio.sleep(0)
        return x + 1

    def returns_coroutine(x: int):
        """Returns a coroutine."""
        return later(x)

    wrapped = tool(returns_coroutine)
    assert wrapped.is_async is False
    assert wrapped.run(x=1) == 2
    assert asyncio.run(wrapped.arun(x=2)) == 3


async def test_run_inside_a_running_loop_with_an_async_tool():
    loop_thread = threading.get_ident()
    seen: list[int] = []

    @tool
    async def where(x: int) -> int:
        """Report the thread."""
        seen.append(threading.get_ident())
        return x

    assert where.run(x=3) == 3  # would crash with asyncio.run inside a running loop
    assert seen[0] != loop_thread


async def test_sync_tool_in_async_code_runs_in_a_worker_thread_without_blocking_the_loop():
    loop_thread = threading.get_ident()
    seen: list[int] = []

    @tool
    def slow(x: int) -> int:
        """Block for a while."""
        seen.append(threading.get_ident())
        time.sleep(0.2)
        return x

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticking = asyncio.create_task(ticker())
    started = time.perf_counter()
    results = await asyncio.gather(*(slow.arun(x=i) for i in range(8)))
    elapsed = time.perf_counter() - started
    ticking.cancel()
    assert results == list(range(8))
    assert loop_thread not in seen
    assert ticks >= 5  # the loop kept running while the tools slept
    assert elapsed < 8 * 0.2  # they ran concurrently, not one after another


async def test_func_and_coroutine_each_serve_their_side():
    def sync_side(x: int) -> str:
        """Either side."""
        return "sync"

    async def async_side(x: int) -> str:
        return "async"

    both = Tool(name="both", func=sync_side, coroutine=async_side)
    assert both.description == "Either side."
    assert both.is_async is False
    assert both.run(x=1) == "sync"
    assert await both.arun(x=1) == "async"
    assert await both.ainvoke({"x": 1}) == "async"


async def test_tool_errors_propagate_from_run_and_arun():
    @tool
    def fail(x: int) -> int:
        """Fail."""
        raise ToolException(f"cannot handle {x}")

    with pytest.raises(ToolException, match="cannot handle 1"):
        fail.run(x=1)
    with pytest.raises(ToolException, match="cannot handle 2"):
        await fail.arun(x=2)


# -- invoke / ainvoke ------------------------------------------------------------------


def test_invoke_with_arguments_returns_the_raw_result():
    assert add.invoke({"a": 1, "b": 2}) == 3


def test_invoke_with_a_tool_call_returns_a_tool_result():
    result = add.invoke({"name": "add", "args": {"a": 1, "b": 2}, "id": "call_001", "type": "tool_call"})
    assert isinstance(result, ToolResult)
    assert (result.content, result.tool_call_id, result.name, result.status) == ("3", "call_001", "add", "success")
    assert result.raw == 3 and result.artifact is None and result.duration >= 0
    from_model = add.invoke(ToolCall(name="add", args={"a": 2, "b": 2}, id="call_002"))
    assert (from_model.content, from_model.tool_call_id) == ("4", "call_002")
    no_id = add.invoke({"name": "add", "args": {"a": 1, "b": 1}, "type": "tool_call"})
    assert no_id.tool_call_id.startswith("call_")


def test_invoke_content_and_artifact():
    @tool(response_format="content_and_artifact")
    def sample(n: int) -> tuple[str, list[int]]:
        """Sample numbers."""
        return f"{n} numbers", list(range(n))

    result = sample.invoke({"name": "sample", "args": {"n": 3}, "id": "c1", "type": "tool_call"})
    assert (result.content, result.artifact, result.status) == ("3 numbers", [0, 1, 2], "success")
    assert sample.invoke({"n": 2}) == "2 numbers"
    assert sample.run(n=1) == ("1 numbers", [0])


def test_content_and_artifact_tool_returning_one_value_is_an_error_result():
    @tool(response_format="content_and_artifact")
    def wrong(n: int) -> str:
        """Wrong shape."""
        return "just content"

    result = wrong.invoke({"name": "wrong", "args": {"n": 1}, "id": "c", "type": "tool_call"})
    assert result.status == "error"
    assert result.content == (
        "ValueError: Tool 'wrong' has response_format='content_and_artifact' and must return "
        "a (content, artifact) tuple, got str"
    )


def test_invoke_result_as_answer_only_on_success():
    @tool(result_as_answer=True)
    def final(x: int) -> str:
        """Final answer."""
        if x < 0:
            raise ValueError("negative")
        return f"answer {x}"

    ok = final.invoke({"name": "final", "args": {"x": 1}, "id": "a", "type": "tool_call"})
    bad = final.invoke({"name": "final", "args": {"x": -1}, "id": "b", "type": "tool_call"})
    assert (ok.result_as_answer, bad.result_as_answer) == (True, False)


def test_invoke_usage_limit_is_a_refused_error_result():
    limited, runs = _counted_tool(1)
    call = {"name": "work", "args": {"n": 1}, "id": "c", "type": "tool_call"}
    assert limited.invoke(call).status == "success"
    refused = limited.invoke(call)
    assert (refused.status, refused.refused) == ("error", True)
    assert refused.content == "Tool 'work' has reached its usage limit of 1 times and cannot be used anymore."
    assert runs == [1]


def test_invoke_with_a_string_fills_the_first_argument():
    @tool
    def shout(text: str, times: int = 1) -> str:
        """Shout."""
        return text.upper() * times

    assert shout.invoke("hey") == "HEY"
    assert add.invoke("1").startswith("Tool 'add' received invalid arguments:\n  - b: Field required")


def test_invoke_passes_the_context_to_injected_parameters():
    search = Search()
    result = search.invoke(
        {"name": "web_search", "args": {"query": "q"}, "id": "c", "type": "tool_call"},
        context=RunContext(task="research"),
    )
    assert result.content == "q|3|research"


def test_a_tool_call_invocation_gives_injected_parameters_its_call_id():
    @tool
    def whoami(ctx: RunContext) -> str:
        """Report the call id."""
        return f"{ctx.tool_call_id}|{ctx.task}"

    call = {"name": "whoami", "args": {}, "id": "call_7", "type": "tool_call"}
    assert whoami.invoke(call, context=RunContext(task="t")).content == "call_7|t"
    assert asyncio.run(whoami.ainvoke(call)).content == "call_7|None"
    assert whoami.invoke({}) == "None|None"  # plain arguments: there is no call id


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        (True, "ToolException: city not found: Atlantis"),
        ("Tool failed, try another city.", "Tool failed, try another city."),
        (lambda exc: f"handled {type(exc).__name__}", "handled ToolException"),
    ],
)
async def test_handle_tool_error_turns_errors_into_observations(handler, expected):
    @tool(handle_tool_error=handler)
    def weather(city: str) -> str:
        """Weather."""
        raise ToolException(f"city not found: {city}")

    call = {"name": "weather", "args": {"city": "Atlantis"}, "id": "c9", "type": "tool_call"}
    for result in (weather.invoke(call), await weather.ainvoke(call)):
        assert (result.status, result.content, result.tool_call_id) == ("error", expected, "c9")
        assert isinstance(result.raw, ToolException)
    assert weather.invoke({"city": "Atlantis"}) == expected


async def test_handle_tool_error_false_re_raises():
    @tool(handle_tool_error=False)
    def weather(city: str) -> str:
        """Weather."""
        raise KeyError(city)

    with pytest.raises(KeyError):
        weather.invoke({"name": "weather", "args": {"city": "x"}, "id": "c", "type": "tool_call"})
    with pytest.raises(KeyError):
        await weather.ainvoke({"city": "x"})
    assert weather.format_error(KeyError("x")) is None


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        (
            True,
            "Tool 'add' received invalid arguments:\n  - b: Field required\n"
            "Expected arguments: a (integer, required), b (integer, required).",
        ),
        ("Bad input.", "Bad input."),
        (lambda exc: f"fix: {', '.join(exc.problems)}", "fix: b"),
    ],
)
async def test_handle_validation_error(handler, expected):
    strict_add = tool("add", add.func, handle_validation_error=handler)
    call = {"name": "add", "args": {"a": 1}, "id": "v", "type": "tool_call"}
    for result in (strict_add.invoke(call), await strict_add.ainvoke(call)):
        assert (result.status, result.content) == ("error", expected)
    assert strict_add.invoke({"a": 1}) == expected
    assert strict_add.current_usage_count == 0


def test_handle_validation_error_false_raises():
    strict_add = tool("add", add.func, handle_validation_error=False)
    with pytest.raises(ToolArgumentsError, match="b: Field required"):
        strict_add.invoke({"a": 1})


def test_batch_and_abatch_keep_order():
    inputs = [{"a": i, "b": i} for i in range(20)]
    assert add.batch(inputs) == [2 * i for i in range(20)]
    assert add.batch([]) == []
    assert asyncio.run(add.abatch(inputs, max_concurrency=3)) == [2 * i for i in range(20)]


# -- the executor-facing surface --------------------------------------------------------


def test_validate_and_dropped_args():
    assert add.validate_args({"a": "1", "b": 2, "zzz": 0}) == {"a": 1, "b": 2}
    assert add.dropped_args({"a": 1, "b": 2, "zzz": 0, "yy": 1}) == ["zzz", "yy"]
    assert add.dropped_args({"a": 1}) == []


def test_extras_dropped_even_when_the_schema_forbids_them():
    class Closed(BaseModel, extra="forbid"):  # the usual way to get additionalProperties: false
        q: str

    @tool(args_schema=Closed)
    def look(q: str) -> str:
        """Look."""
        return q

    assert look.validate_args({"q": "x", "invented": 1}) == {"q": "x"}
    with pytest.raises(ToolArgumentsError) as caught:
        look.run(invented=1)
    assert caught.value.problems == {"q": "Field required"}


def test_extras_kept_when_the_schema_allows_them():
    class Open(BaseModel, extra="allow"):
        q: str

    @tool(args_schema=Open)
    def anything(q: str, **rest: object) -> dict:
        """Anything."""
        return {"q": q, **rest}

    assert anything.validate_args({"q": "x", "more": 1}) == {"q": "x", "more": 1}
    assert anything.dropped_args({"q": "x", "more": 1}) == []
    assert anything.run(q="x", more=1) == {"q": "x", "more": 1}


async def test_execute_and_execute_sync_inject_context_without_counting():
    limited = Search(max_usage_count=1)
    validated = limited.validate_args({"query": "q"})
    ctx = RunContext(task="t1")
    assert limited._execute_sync(validated, ctx) == "q|3|t1"
    assert await limited._execute(validated, ctx) == "q|3|t1"
    assert await limited._execute(validated, None) == "q|3|None"
    assert "ctx" not in validated  # the caller's dict is untouched
    assert limited.current_usage_count == 0


async def test_execute_sync_of_an_async_tool_returns_its_coroutine():
    coro = Doubler()._execute_sync({"x": 2}, None)
    assert asyncio.iscoroutine(coro)
    assert await coro == 4


class Opaque:
    def __str__(self) -> str:
        return "<opaque>"


def test_format_result_and_format_error():
    assert add.format_result(3) == ("3", None)
    assert add.format_result({"k": [1, "é"]}) == ('{"k": [1, "é"]}', None)
    assert add.format_result(None) == ("", None)
    # the model reads text: bytes decoded, nested sets/enums/dates in JSON form, other objects via str()
    assert add.format_result(b"caf\xc3\xa9 \xff") == ("café \ufffd", None)
    nested = {"s": {3}, "b": b"x", "d": date(2024, 1, 2)}
    assert add.format_result(nested) == ('{"s": [3], "b": "x", "d": "2024-01-02"}', None)
    assert add.format_result(date(2024, 1, 2)) == ("2024-01-02", None)
    assert add.format_result(Opaque()) == ("<opaque>", None)
    assert add.format_result((1.5, True)) == ("[1.5, true]", None)
    assert add.format_error(ValueError("boom")) == "ValueError: boom"
    assert add.format_error(RuntimeError()) == "RuntimeError"


def test_usage_limit_message_property():
    limited, _ = _counted_tool(7)
    assert limited.usage_limit_message == (
        "Tool 'work' has reached its usage limit of 7 times and cannot be used anymore."
    )


async def test_async_tool_receives_the_context_passed_to_arun():
    @tool
    async def note(text: str, ctx: RunContext) -> str:
        """Note."""
        return f"{ctx.agent}:{text}"

    assert note.args == {"text": {"type": "string"}}
    assert await note.arun(text="hi", ctx=RunContext(agent="writer")) == "writer:hi"
    assert await note.arun(text="hi") == "None:hi"


def test_injected_parameters_detected_with_an_explicit_schema():
    class NoteInput(BaseModel):
        text: str

    @tool(args_schema=NoteInput)
    def note(text: str, ctx: RunContext) -> str:
        """Note."""
        return f"{ctx.task}:{text}"

    assert note.injected_params == frozenset({"ctx"})
    assert note.invoke({"text": "x"}, context=RunContext(task="t")) == "t:x"
