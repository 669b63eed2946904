"""LangChain and CrewAI tool objects as crew tools: adapted where tool lists are normalised,
run through the one executor (validation, cache, limits, result_as_answer, error observations).

LangChain is real (``langchain-core`` is in the dev extra). CrewAI is too heavy for CI:
stand-ins with CrewAI's attribute shape (pydantic models with ``name``, ``description``,
``args_schema``, ``_run``, ``result_as_answer``, ``max_usage_count``, ``cache_function``)
cover it, plus one test against the real package that runs when it is importable.
"""

from __future__ import annotations

import asyncio
import importlib.util
import textwrap
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from crew import Agent, Crew, Task
from crew.testing import FunctionModel
from crew.tools import ToolExecutor
from crew.tools.adapters import ForeignTool, adapt_tool
from crew.tools.options import never_cache

lc = pytest.importorskip("langchain_core.tools", reason="langchain-core is in the dev extra")
InjectedToolCallId = lc.InjectedToolCallId  # module level: the tools' annotations are read in this module


# -- LangChain --------------------------------------------------------------------------


@lc.tool
def search(query: str, limit: int = 5) -> str:
    """Search the catalogue."""
    return f"{query}:{limit}"


def test_langchain_tool_keeps_name_description_and_schema() -> None:
    adapted = adapt_tool(search)
    assert isinstance(adapted, ForeignTool) and adapted.kind == "langchain"
    assert adapted.name == "search" and adapted.description == "Search the catalogue."
    expected = search.tool_call_schema.model_json_schema()
    params = adapted.to_openai_tool()["function"]["parameters"]
    assert params["required"] == expected["required"] == ["query"]
    assert {k: {x: y for x, y in v.items() if x != "title"} for k, v in expected["properties"].items()} == params[
        "properties"
    ]


def test_names_are_sanitised_for_providers_and_single_input_tools_take_their_string() -> None:
    plain = lc.Tool(name="Search the internet", func=lambda text: text.upper(), description="Shout it.")
    executor = ToolExecutor([plain])
    (adapted,) = executor.tools
    assert adapted.tool_name == "Search_the_internet" and adapted.name == "Search the internet"
    assert adapted.to_openai_tool()["function"]["parameters"]["required"] == ["tool_input"]
    result = executor.execute({"name": "Search_the_internet", "args": {"tool_input": "hi"}})
    assert (result.status, result.content) == ("success", "HI")


def test_calls_go_through_the_executor_cache_included() -> None:
    runs: list[str] = []

    @lc.tool
    def lookup(key: str) -> dict[str, Any]:
        """Look a key up."""
        runs.append(key)
        return {"key": key, "n": len(runs)}

    executor = ToolExecutor([lookup])
    first = executor.execute({"name": "lookup", "args": {"key": "a"}})
    again = executor.execute({"name": "lookup", "args": {"key": "a"}})
    assert first.content == '{"key": "a", "n": 1}' and again.cached and again.content == first.content
    assert runs == ["a"] and executor.stats["lookup"].cache_hits == 1


def test_invalid_arguments_are_reported_before_the_tool_runs() -> None:
    result = ToolExecutor([search]).execute({"name": "search", "args": {"limit": "many"}})
    assert result.status == "error"
    assert "query" in result.content and "limit" in result.content and "Expected arguments" in result.content


def test_arguments_left_out_stay_out_of_the_call() -> None:
    seen: list[dict[str, Any]] = []

    def record(**kwargs: Any) -> str:
        seen.append(kwargs)
        return "ok"

    schema = {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["query"],
    }
    dict_schema = lc.StructuredTool.from_function(record, name="record", description="Record.", args_schema=schema)
    result = ToolExecutor([dict_schema]).execute({"name": "record", "args": {"query": "q"}})
    assert result.status == "success" and seen == [{"query": "q"}]


def test_tool_exception_and_error_status_become_error_observations() -> None:
    @lc.tool
    def fragile(x: int) -> str:
        """Fails."""
        raise lc.ToolException(f"no luck with {x}")

    @lc.tool
    def handled(x: int) -> str:
        """Fails, handled by LangChain."""
        raise lc.ToolException("handled failure")

    handled.handle_tool_error = True

    @lc.tool
    def crashing(x: int) -> str:
        """Crashes."""
        raise RuntimeError("disk on fire")

    executor = ToolExecutor([fragile, handled, crashing])
    raised = executor.execute({"name": "fragile", "args": {"x": 3}})
    flagged = executor.execute({"name": "handled", "args": {"x": 3}})
    crashed = executor.execute({"name": "crashing", "args": {"x": 3}})
    assert (raised.status, raised.content) == ("error", "ToolException: no luck with 3")
    assert (flagged.status, flagged.content) == ("error", "ToolException: handled failure")
    assert crashed.status == "error" and "disk on fire" in crashed.content


def test_return_direct_means_result_as_answer_and_artifacts_are_kept() -> None:
    @lc.tool(return_direct=True)
    def final(x: int) -> str:
        """Answer directly."""
        return f"answer {x}"

    @lc.tool(response_format="content_and_artifact")
    def chart(n: int) -> tuple[str, dict[str, Any]]:
        """Draw a chart."""
        return f"{n} points", {"points": list(range(n))}

    executor = ToolExecutor([final, chart])
    direct = executor.execute({"name": "final", "args": {"x": 1}})
    drawn = executor.execute({"name": "chart", "args": {"n": 3}})
    assert direct.result_as_answer and direct.content == "answer 1"
    assert drawn.content == "3 points" and drawn.artifact == {"points": [0, 1, 2]}
    assert adapt_tool(chart).run(n=2) == ("2 points", {"points": [0, 1]})  # type: ignore[union-attr]


def test_async_tools_run_natively_and_subclasses_use_their_own_arun() -> None:
    @lc.tool
    async def fetch(url: str) -> str:
        """Fetch a page."""
        await asyncio.sleep(0)
        return f"page {url}"

    class Weather(lc.BaseTool):
        name: str = "weather"
        description: str = "The weather in a city."
        calls: list[str] = Field(default_factory=list)

        def _run(self, city: str) -> str:
            self.calls.append("sync")
            return f"sun in {city}"

        async def _arun(self, city: str) -> str:
            self.calls.append("async")
            return f"rain in {city}"

    weather = Weather()
    executor = ToolExecutor([fetch, weather])
    assert [t.is_async for t in executor.tools] == [True, False]
    assert [t.native_async for t in executor.tools] == [True, True]  # type: ignore[attr-defined]

    async def both() -> list[str]:
        results = await executor.aexecute_many(
            [{"name": "fetch", "args": {"url": "u"}}, {"name": "weather", "args": {"city": "Oslo"}}]
        )
        return [r.content for r in results]

    assert asyncio.run(both()) == ["page u", "rain in Oslo"]
    assert executor.execute({"name": "fetch", "args": {"url": "v"}}).content == "page v"  # sync caller, async tool
    assert weather.calls == ["async"]


def test_an_injected_tool_call_id_is_the_models_call_id() -> None:
    """LangChain's ``InjectedToolCallId`` got a fresh random id, never the one the model sent."""

    @lc.tool
    def with_id(q: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Has an injected id."""
        return f"id={tool_call_id}"

    @lc.tool
    async def with_id_async(q: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Has an injected id, async."""
        return f"id={tool_call_id}"

    executor = ToolExecutor([with_id, with_id_async])
    assert executor.execute({"name": "with_id", "args": {"q": "a"}, "id": "call_MODEL_1"}).content == "id=call_MODEL_1"
    later = asyncio.run(executor.aexecute({"name": "with_id_async", "args": {"q": "a"}, "id": "call_MODEL_2"}))
    assert later.content == "id=call_MODEL_2"
    assert "tool_call_id" not in executor.tools[0].parameters().get("properties", {})  # never shown to the model


def test_agent_and_task_tool_lists_adapt_them_and_an_agent_run_calls_one() -> None:
    calls: list[str] = []

    @lc.tool
    def shout(text: str) -> str:
        """Shout the text."""
        calls.append(text)
        return text.upper()

    def script(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        if messages[-1]["role"] != "tool":
            assert [t["function"]["name"] for t in tools] == ["shout"]
            return [{"name": "shout", "args": {"text": "hello"}}]
        return f"heard {messages[-1]['content']}"

    agent = Agent(role="crier", goal="Shout", llm=FunctionModel(script), tools=[shout])
    task = Task(description="Shout hello", expected_output="a shout", agent=agent, tools=[shout])
    assert isinstance(agent.tools[0], ForeignTool) and isinstance(task.tools[0], ForeignTool)
    output = Crew(agents=[agent], tasks=[task]).kickoff()
    assert output.raw == "heard HELLO" and calls == ["hello"]
    assert output.tool_stats["shout"].runs == 1


def test_yaml_tools_by_import_path_adapt_langchain_objects_and_classes(tmp_path) -> None:
    from crew.config import load_crew

    (tmp_path / "lc_tools.py").write_text(
        textwrap.dedent(
            '''
            from langchain_core.tools import BaseTool, tool

            @tool
            def add(a: int, b: int) -> int:
                """Add two numbers."""
                return a + b

            class Echo(BaseTool):
                name: str = "echo"
                description: str = "Echo the text."

                def _run(self, text: str) -> str:
                    return text
            '''
        )
    )
    (tmp_path / "crew.yaml").write_text(
        textwrap.dedent(
            """
            llm: test
            tools:
              add: lc_tools:add
              echo: {import: "lc_tools:Echo", max_usage_count: 1}
            agents:
              calc: {role: Calculator, goal: Add, backstory: Adds., tools: [add, echo]}
            tasks:
              sum: {description: Add 1 and 2, expected_output: a number, agent: calc}
            """
        )
    )
    crew = load_crew(tmp_path)
    add, echo = crew.agents[0].tools
    assert isinstance(add, ForeignTool) and isinstance(echo, ForeignTool) and echo.max_usage_count == 1
    assert ToolExecutor([add]).execute({"name": "add", "args": {"a": 1, "b": 2}}).content == "3"
    output = crew.kickoff()  # the test model calls each tool once with schema-made arguments
    assert output.tool_stats["add"].runs == 1 and output.tool_stats["echo"].runs == 1


# -- CrewAI (stand-ins with its attribute shape) -------------------------------------------


class Query(BaseModel):
    query: str = Field(description="What to look for")
    page: int = 1


def crewai_description(name: str, text: str, schema: type[BaseModel]) -> str:
    """What CrewAI's model_post_init turns a description into."""
    return f"Tool Name: {name}\nTool Arguments: {schema.model_json_schema()}\nTool Description: {text}"


class StandInTool(BaseModel):
    """The attribute shape of ``crewai.tools.BaseTool`` (base_tool.py:103 in the notes)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    description: str
    args_schema: type[BaseModel]
    result_as_answer: bool = False
    max_usage_count: int | None = None
    current_usage_count: int = 0
    cache_function: Any = lambda _args, _result: True
    seen: list[dict[str, Any]] = Field(default_factory=list)

    def run(self, *args: Any, **kwargs: Any) -> Any:  # CrewAI's counts on the object: must be bypassed
        self.current_usage_count += 1
        return self._run(**kwargs)

    def _run(self, **kwargs: Any) -> Any:
        self.seen.append(kwargs)
        return f"found {kwargs['query']} p{kwargs['page']}"


def stand_in(**options: Any) -> StandInTool:
    return StandInTool(
        name="Search the internet",
        description=crewai_description("Search the internet", "Search the web.", Query),
        args_schema=Query,
        **options,
    )


def test_crewai_shape_is_adapted_with_its_own_description_and_schema() -> None:
    adapted = adapt_tool(stand_in())
    assert isinstance(adapted, ForeignTool) and adapted.kind == "crewai"
    assert adapted.tool_name == "Search_the_internet" and adapted.description == "Search the web."
    assert adapted.args_schema is Query
    params = adapted.to_openai_tool()["function"]["parameters"]
    assert params["required"] == ["query"] and params["properties"]["page"]["default"] == 1


def test_crewai_max_usage_count_counts_per_run_in_our_executor() -> None:
    tool = stand_in(max_usage_count=2)
    for _run in range(2):  # each executor is one run: the limit applies afresh
        executor = ToolExecutor([tool], cache=False)
        results = [executor.execute({"name": "Search_the_internet", "args": {"query": f"q{i}"}}) for i in range(3)]
        assert [r.status for r in results] == ["success", "success", "error"]
        assert results[2].refused and "usage limit of 2" in results[2].content
    assert tool.current_usage_count == 0  # CrewAI's own counter is not involved
    assert tool.seen == [{"query": "q0", "page": 1}, {"query": "q1", "page": 1}] * 2


def test_crewai_cache_function_and_result_as_answer_are_honoured() -> None:
    no_cache = stand_in(cache_function=lambda args, result: args["page"] > 1)
    executor = ToolExecutor([no_cache])
    for _ in range(2):
        executor.execute({"name": "Search_the_internet", "args": {"query": "a"}})  # page 1: not stored
        executor.execute({"name": "Search_the_internet", "args": {"query": "a", "page": 2}})
    assert [call["page"] for call in no_cache.seen] == [1, 2, 1]
    assert executor.stats["Search_the_internet"].cache_hits == 1

    answer = ToolExecutor([stand_in(result_as_answer=True, cache_function=never_cache)])
    result = answer.execute({"name": "Search_the_internet", "args": {"query": "z"}})
    assert result.result_as_answer and result.content == "found z p1"


def test_crewai_nested_models_reach_run_as_dicts_and_async_implementations_are_awaited() -> None:
    class Address(BaseModel):
        city: str

    class Ship(BaseModel):
        to: Address

    class AsyncStandIn(StandInTool):
        def _run(self, **kwargs: Any) -> Any:
            self.seen.append({"sync": kwargs})
            return "shipped"

        async def _arun(self, **kwargs: Any) -> Any:
            self.seen.append({"async": kwargs})
            return "shipped later"

    ship = AsyncStandIn(name="ship", description="Ship a parcel.", args_schema=Ship)
    executor = ToolExecutor([ship], cache=False)
    assert executor.execute({"name": "ship", "args": {"to": {"city": "Rome"}}}).content == "shipped"
    later = asyncio.run(executor.aexecute({"name": "ship", "args": {"to": {"city": "Oslo"}}}))
    assert later.content == "shipped later"
    assert ship.seen == [{"sync": {"to": {"city": "Rome"}}}, {"async": {"to": {"city": "Oslo"}}}]


def test_crewai_decorator_shape_with_an_async_function() -> None:
    class FuncTool(StandInTool):
        func: Any = None

        def _run(self, **kwargs: Any) -> Any:
            return self.func(**kwargs)

    async def lookup(query: str, page: int = 1) -> str:
        await asyncio.sleep(0)
        return f"async {query}"

    tool = FuncTool(name="lookup", description="Look up.", args_schema=Query, func=lookup)
    executor = ToolExecutor([tool])
    assert executor.execute({"name": "lookup", "args": {"query": "x"}}).content == "async x"
    assert asyncio.run(executor.aexecute({"name": "lookup", "args": {"query": "y"}})).content == "async y"


def test_things_that_are_not_foreign_tools_are_left_alone() -> None:
    from crew import tool

    @tool
    def mine(x: int) -> int:
        """Mine."""
        return x

    assert adapt_tool(mine) is None and adapt_tool(len) is None and adapt_tool("search") is None
    assert adapt_tool(StandInTool) is None  # a class: YAML instantiates it first


@pytest.mark.skipif(importlib.util.find_spec("crewai") is None, reason="crewai is not installed (too heavy for CI)")
def test_real_crewai_tools() -> None:  # pragma: no cover - runs where crewai is installed
    from crewai.tools import BaseTool as CrewAIBaseTool
    from crewai.tools import tool as crewai_tool

    class Lookup(CrewAIBaseTool):
        name: str = "Look it up"
        description: str = "Look a word up."
        args_schema: type[BaseModel] = Query
        max_usage_count: int | None = 1

        def _run(self, query: str, page: int = 1) -> str:
            return f"{query}@{page}"

    @crewai_tool("Shout")
    def shout(text: str) -> str:
        """Shout the text."""
        return text.upper()

    executor = ToolExecutor([Lookup(), shout], cache=False)
    assert [t.tool_name for t in executor.tools] == ["Look_it_up", "Shout"]
    assert executor.tools[0].description == "Look a word up."
    assert executor.execute({"name": "Look_it_up", "args": {"query": "w"}}).content == "w@1"
    assert executor.execute({"name": "Look_it_up", "args": {"query": "w"}}).refused
    assert executor.execute({"name": "Shout", "args": {"text": "hi"}}).content == "HI"


def test_copies_of_one_foreign_tool_share_its_cache_and_other_settings_do_not() -> None:
    """Each agent's own instance of one LangChain or CrewAI tool class is the same tool: it was
    counted and cached apart (``q`` and ``q#2``), while one configured otherwise must be."""

    class Forecast(lc.BaseTool):
        name: str = "forecast"
        description: str = "The forecast for a city."
        unit: str = "c"

        def _run(self, city: str) -> str:
            return f"12 {self.unit} in {city}"

    first, copy, other = adapt_tool(Forecast()), adapt_tool(Forecast()), adapt_tool(Forecast(unit="f"))
    executor = ToolExecutor([first, copy, other])
    call = {"name": "forecast", "args": {"city": "Oslo"}}
    results = [executor.execute(call, tools=[tool]) for tool in (first, copy, other)]
    assert [(r.content, r.cached) for r in results] == [
        ("12 c in Oslo", False),
        ("12 c in Oslo", True),
        ("12 f in Oslo", False),
    ]
    assert sorted(executor.stats) == ["forecast", "forecast#2"]
