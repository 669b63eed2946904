"""@tool in every form, descriptions, docstrings and the options it forwards."""

import asyncio
import functools
from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from crew.errors import ToolDefinitionError
from crew.tools import BaseTool, Tool, tool


class SearchInput(BaseModel):
    """Search a document store."""

    query: str = Field(description="What to look for")
    limit: int = Field(default=5, ge=1, le=20)


def test_bare_decorator_builds_a_tool_named_after_the_function():
    @tool
    def search_attractions(city: str, preference: str) -> str:
        """Search attractions in a city based on user preference."""
        return f"{city} attractions for {preference}"

    assert type(search_attractions) is Tool
    assert isinstance(search_attractions, BaseTool)
    assert search_attractions.name == "search_attractions"
    assert search_attractions.description == "Search attractions in a city based on user preference."
    assert search_attractions.args == {"city": {"type": "string"}, "preference": {"type": "string"}}
    assert search_attractions.run(city="Osaka", preference="food") == "Osaka attractions for food"
    assert search_attractions.func("a", "b") == "a attractions for b"


def test_inferred_args_schema_is_titled_and_described_like_langchains():
    @tool(parse_docstring=True)
    def search_attractions(city: str, limit: int = 5) -> str:
        """Search attractions in a city.

        Args:
            city: Destination city.
            limit: Maximum number of results.
        """
        return city

    schema = search_attractions.args_schema.model_json_schema()
    assert schema["title"] == "search_attractions"
    assert schema["description"] == "Search attractions in a city."
    assert schema["properties"]["limit"] == {
        "default": 5,
        "description": "Maximum number of results.",
        "title": "Limit",
        "type": "integer",
    }
    assert "title" not in search_attractions.to_openai_tool()["function"]["parameters"]  # tokens saved


def test_custom_name_forms():
    def search(q: str) -> str:
        """Search."""
        return q

    assert tool("web_search")(search).name == "web_search"
    assert tool(name="web_search")(search).name == "web_search"
    assert tool("web_search", search).name == "web_search"
    assert tool("web_search", name="web_search")(search).name == "web_search"
    assert tool()(search).name == "search"
    assert tool(search, description="Explicit.").description == "Explicit."


def test_every_form_returns_a_tool_for_sync_and_async_functions():
    def search(q: str) -> str:
        """Search."""
        return q

    async def asearch(q: str) -> str:
        """Search, asynchronously."""
        return q

    for fn in (search, asearch):
        built = [
            tool(fn),
            tool("custom name")(fn),
            tool(name="n", description="d")(fn),
            tool("n", fn),
            tool()(fn),
            tool(fn, max_usage_count=2),
            Tool.from_function(fn),
        ]
        assert all(type(t) is Tool for t in built), fn
        assert all(t.run(q="x") == "x" for t in built)


def test_name_given_twice_differently_is_an_error():
    def search(q: str) -> str:
        """Search."""
        return q

    with pytest.raises(ToolDefinitionError, match="tool name given twice: 'a' and name='b'"):
        tool("a", name="b")(search)
    with pytest.raises(ToolDefinitionError, match="needs a non-empty name"):
        tool(name="")(search)
    with pytest.raises(ToolDefinitionError, match="a tool made from a lambda needs a name"):
        tool(lambda x: 2 * x, description="Double x.")
    assert tool("double", lambda x: 2 * x, description="Double x.").run(x=2) == 4


def test_invalid_decorator_arguments_are_clear_errors():
    with pytest.raises(ToolDefinitionError, match="takes a function or a name, got int"):
        tool(3)
    with pytest.raises(ToolDefinitionError, match="decorates a function, got str"):
        tool("name")("not a function")
    with pytest.raises(ToolDefinitionError, match="needs the name as a string first"):
        tool(None, lambda: 1)

    @tool
    def once() -> str:
        """Once."""
        return "x"

    with pytest.raises(ToolDefinitionError, match="'once' is already a tool"):
        tool(once)


def test_unknown_option_names_the_problem():
    with pytest.raises(ToolDefinitionError, match=r"Invalid tool 'f': max_usage: Extra inputs are not permitted"):

        @tool(max_usage=3)
        def f(x: int) -> int:
            """F."""
            return x


def test_missing_docstring_and_description_is_a_clear_error():
    with pytest.raises(ToolDefinitionError) as info:

        @tool
        def search(q: str) -> str:
            return q

    assert str(info.value) == (
        "Tool 'search' has no description: give the function a docstring or pass description=... "
        "(the model reads it to decide when to call the tool)"
    )
    assert isinstance(info.value, ValueError)


def test_description_precedence_explicit_then_docstring_then_schema():
    def documented(query: str, limit: int = 5) -> str:
        """
        Documented function.

            Indented detail stays relative.
        """
        return query

    def undocumented(query: str, limit: int = 5) -> str:
        return query

    assert tool(description="Explicit wins.")(documented).description == "Explicit wins."
    assert tool(documented).description == "Documented function.\n\n    Indented detail stays relative."
    assert tool(args_schema=SearchInput)(undocumented).description == "Search a document store."
    assert tool(args_schema=SearchInput)(documented).description.startswith("Documented function.")


def test_explicit_args_schema_is_used_as_is():
    @tool(args_schema=SearchInput)
    def search(query: str, limit: int = 5) -> list[str]:
        """Search documents."""
        return [query] * limit

    assert search.args_schema is SearchInput
    assert search.run(query="x", limit=2) == ["x", "x"]
    with pytest.raises(ValueError, match="limit: Input should be less than or equal to 20"):
        search.run(query="x", limit=50)


def test_args_schema_as_json_schema_dict():
    schema = {
        "title": "search_attractions",
        "description": "Search attractions matching traveler interests.",
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "Destination city"},
            "preference": {"type": "string", "description": "Traveler preference"},
        },
        "required": ["city", "preference"],
        "additionalProperties": False,
    }

    def search(**kwargs: str) -> str:
        return f"{kwargs['city']}/{kwargs['preference']}"

    built = tool("search_attractions", search, args_schema=schema)
    assert issubclass(built.args_schema, BaseModel)
    assert built.args_schema.model_json_schema()["title"] == "search_attractions"
    assert built.description == "Search attractions matching traveler interests."
    assert built.args["city"] == {"type": "string", "description": "Destination city"}
    assert built.run(city="Osaka", preference="food") == "Osaka/food"


def test_parse_docstring_reads_google_args_and_keeps_the_summary():
    @tool(parse_docstring=True)
    def search_attractions(city: str, preference: str, limit: int = 5) -> list[str]:
        """Search attractions matching user interests.

        Args:
            city: Destination city.
            preference: Traveler preference,
                such as food or art.
            limit (int): Maximum number of attractions.

        Returns:
            A list of names.
        """
        return []

    assert search_attractions.description == "Search attractions matching user interests."
    assert search_attractions.args == {
        "city": {"type": "string", "description": "Destination city."},
        "preference": {"type": "string", "description": "Traveler preference, such as food or art."},
        "limit": {"type": "integer", "default": 5, "description": "Maximum number of attractions."},
    }


def test_without_parse_docstring_the_whole_docstring_is_the_description():
    @tool
    def search(city: str) -> str:
        """Search.

        Args:
            city: Destination city.
        """
        return city

    assert search.description == "Search.\n\nArgs:\n    city: Destination city."
    assert "description" not in search.args["city"]


def test_error_on_invalid_docstring_undocumented_argument():
    with pytest.raises(ToolDefinitionError) as info:

        @tool(parse_docstring=True)
        def search(city: str, country: str) -> str:
            """Search.

            Args:
                city: Destination city.
            """
            return city

    assert str(info.value) == (
        "Tool 'search': the docstring does not document argument(s) 'country'; add them under 'Args:' "
        "(Google style) or pass error_on_invalid_docstring=False"
    )


def test_error_on_invalid_docstring_unknown_argument_and_no_args_section():
    with pytest.raises(ToolDefinitionError, match=r"documents 'country', which the function does not take"):

        @tool(parse_docstring=True)
        def search(city: str) -> str:
            """Search.

            Args:
                city: Destination city.
                country: Country.
            """
            return city

    with pytest.raises(ToolDefinitionError, match=r"does not document argument\(s\) 'city'"):

        @tool(parse_docstring=True)
        def plain(city: str) -> str:
            """Search without an Args block."""
            return city


def test_invalid_docstring_tolerated_when_asked():
    @tool(parse_docstring=True, error_on_invalid_docstring=False)
    def search(city: str, country: str) -> str:
        """Search.

        Args:
            city: Destination city.
        """
        return city

    assert search.description == "Search."
    assert search.args["city"]["description"] == "Destination city."
    assert "description" not in search.args["country"]


def test_annotated_and_field_descriptions_count_as_documented():
    @tool(parse_docstring=True)
    def search(
        city: Annotated[str, "Destination city name"],
        limit: int = Field(default=5, description="Maximum results"),
        country: str = "JP",
    ) -> str:
        """Search.

        Args:
            country: ISO country code.
        """
        return f"{city}{limit}{country}"

    assert search.args["city"]["description"] == "Destination city name"
    assert search.args["limit"] == {"type": "integer", "default": 5, "description": "Maximum results"}
    assert search.args["country"]["description"] == "ISO country code."
    assert search.run(city="Kyoto") == "Kyoto5JP"


def test_parse_docstring_without_docstring_is_an_error():
    with pytest.raises(ToolDefinitionError, match="parse_docstring=True but the function has no docstring"):
        tool("echo", parse_docstring=True, description="x")(lambda q: q)


def test_infer_schema_false_takes_one_string_input():
    @tool(infer_schema=False)
    def shout(text):
        """Shout the text."""
        return text.upper()

    assert shout.args == {"tool_input": {"type": "string"}}
    assert shout.run(tool_input="hi") == "HI"
    assert shout.run("hey") == "HEY"
    assert shout.invoke("yo") == "YO"


async def test_infer_schema_false_async():
    @tool(infer_schema=False)
    async def shout(text):
        """Shout the text."""
        return text.upper()

    assert await shout.arun(tool_input="hi") == "HI"


def test_result_as_answer_and_its_alias_return_direct():
    def answer(q: str) -> str:
        """Answer."""
        return q

    assert tool(result_as_answer=True)(answer).result_as_answer is True
    direct = tool(return_direct=True)(answer)
    assert direct.result_as_answer is True and direct.return_direct is True
    assert tool(answer).result_as_answer is False
    assert tool(return_direct=True, result_as_answer=True)(answer).result_as_answer is True
    with pytest.raises(ToolDefinitionError, match="result_as_answer and its alias return_direct disagree"):
        tool(return_direct=True, result_as_answer=False)(answer)
    assert Tool(name="t", description="d", func=answer, return_direct=True).result_as_answer is True


def test_options_reach_the_tool():
    def never(arguments: dict, result: object) -> bool:
        return False

    class Out(BaseModel):
        value: int

    @tool(
        max_usage_count=3,
        cache_function=never,
        response_format="content_and_artifact",
        result_schema=Out,
        env_vars=["API_TOKEN"],
        handle_tool_error="failed",
        handle_validation_error=False,
        tags=["a"],
        metadata={"k": 1},
    )
    def compute(x: int) -> tuple[str, dict]:
        """Compute."""
        return str(x), {"x": x}

    assert compute.max_usage_count == 3
    assert compute.cache_function is never
    assert compute.response_format == "content_and_artifact"
    assert compute.result_schema is Out
    assert compute.env_vars[0].name == "API_TOKEN" and compute.env_vars[0].required is True
    assert compute.handle_tool_error == "failed"
    assert compute.handle_validation_error is False
    assert compute.tags == ["a"] and compute.metadata == {"k": 1}
    assert compute.cache_function({"x": 1}, "1") is False


def test_default_cache_function_returns_true():
    @tool
    def f(x: int) -> int:
        """F."""
        return x

    assert f.cache_function({"x": 1}, 1) is True


def test_max_usage_count_zero_or_negative_rejected_when_built():
    def f(x: int) -> int:
        """F."""
        return x

    for bad in (0, -2):
        with pytest.raises(ToolDefinitionError) as info:
            tool(max_usage_count=bad)(f)
        assert str(info.value) == f"Tool 'f': max_usage_count must be a positive integer or None, got {bad}"


async def test_async_functions_become_coroutine_tools():
    @tool
    async def fetch(url: str) -> str:
        """Fetch a page."""
        await asyncio.sleep(0)
        return f"<{url}>"

    assert fetch.func is None and fetch.coroutine is not None
    assert fetch.is_async is True
    assert fetch.args == {"url": {"type": "string"}}
    assert await fetch.arun(url="a") == "<a>"
    assert fetch.run(url="b") == "<b>"  # a running loop here: the coroutine runs on another thread's loop


def test_partial_and_callable_objects():
    def greet(greeting: str, name: str) -> str:
        """Greet someone."""
        return f"{greeting}, {name}"

    hello = tool("hello", functools.partial(greet, "Hello"))
    assert hello.args == {"name": {"type": "string"}}
    assert hello.description == "Greet someone."
    assert hello.run(name="Ada") == "Hello, Ada"

    class Multiplier:
        """Multiply by a factor."""

        def __init__(self, factor: int) -> None:
            self.factor = factor

        def __call__(self, x: int) -> int:
            return x * self.factor

    triple = tool("triple", Multiplier(3))
    assert triple.description == "Multiply by a factor."
    assert triple.run(x="4") == 12

    class Adder:  # documented where its arguments are: it was refused for having no description
        def __call__(self, a: int, b: int) -> int:
            """Add two numbers."""
            return a + b

    assert tool("add", Adder()).description == "Add two numbers."


def test_from_function_and_direct_tool_construction():
    def add(a: int, b: int = 1) -> int:
        """Add numbers."""
        return a + b

    built = Tool.from_function(add, name="adder")
    assert built.name == "adder" and built.run(a=2) == 3
    direct = Tool(name="plus", func=add)
    assert direct.description == "Add numbers."
    assert direct.args == {"a": {"type": "integer"}, "b": {"type": "integer", "default": 1}}
    with pytest.raises(ToolDefinitionError, match="Tool 'nothing' needs a func and/or a coroutine"):
        Tool(name="nothing", description="d")
