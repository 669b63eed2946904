"""Schema inference, JSON-schema dicts, docstring parsing, provider names and renderings."""

import json
import math
import re
from typing import Annotated, Literal, Optional

import pytest
from pydantic import BaseModel, Field

from crew.errors import ToolDefinitionError
from crew.tools import RunContext, sanitize_tool_name, tool
from crew.tools.docstrings import parse_google_docstring
from crew.tools.json_schema import model_from_json_schema


class Address(BaseModel):
    street: str
    city: str = "Osaka"


class Trip(BaseModel):
    destination: Address
    stops: list[Address] = []


@tool
def plan(
    trip: Trip,
    mode: Literal["walk", "train"] = "train",
    days: int | None = None,
    tags: list[str] = ["fun"],  # noqa: B006 - a default shown in the schema
    budget: Optional[float] = None,  # noqa: UP045
    note: Annotated[str, "Free text for the planner"] = "",
) -> str:
    """Plan a trip."""
    return f"{trip.destination.city}|{mode}|{days}|{tags}|{budget}|{note}|{len(trip.stops)}"


def test_enums_nested_models_lists_optionals_and_defaults_in_schema():
    params = plan.to_openai_tool()["function"]["parameters"]
    assert params == {
        "$defs": {
            "Address": {
                "properties": {"street": {"type": "string"}, "city": {"default": "Osaka", "type": "string"}},
                "required": ["street"],
                "type": "object",
            },
            "Trip": {
                "properties": {
                    "destination": {"$ref": "#/$defs/Address"},
                    "stops": {"default": [], "items": {"$ref": "#/$defs/Address"}, "type": "array"},
                },
                "required": ["destination"],
                "type": "object",
            },
        },
        "properties": {
            "trip": {"$ref": "#/$defs/Trip"},
            "mode": {"default": "train", "enum": ["walk", "train"], "type": "string"},
            "days": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "tags": {"default": ["fun"], "items": {"type": "string"}, "type": "array"},
            "budget": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None},
            "note": {"default": "", "description": "Free text for the planner", "type": "string"},
        },
        "required": ["trip"],
        "type": "object",
    }


def test_nested_models_reach_the_function_as_instances():
    out = plan.run(trip={"destination": {"street": "1 Main"}, "stops": [{"street": "a"}]}, mode="walk", days="3")
    assert out == "Osaka|walk|3|['fun']|None||1"
    validated = plan.validate_args({"trip": {"destination": {"street": "x", "city": "Nara"}}})
    assert isinstance(validated["trip"], Trip)
    assert validated["trip"].destination == Address(street="x", city="Nara")


def test_self_args_kwargs_and_run_context_are_skipped():
    class Holder:
        def method(
            self, query: str, *args: int, ctx: RunContext, maybe: RunContext | None = None, **kwargs: str
        ) -> str:
            """Look something up."""
            return query

    looked = tool("lookup", Holder().method)
    assert list(looked.args) == ["query"]
    assert looked.injected_params == frozenset({"ctx", "maybe"})
    assert looked.args_schema.model_json_schema()["required"] == ["query"]


def test_bound_methods_and_positional_only_arguments():
    class Counter:
        def __init__(self) -> None:
            self.base = 10

        def add(self, x: int) -> int:
            """Add to the base."""
            return self.base + x

    bound = tool(Counter().add)
    assert (bound.name, list(bound.args), bound.run(x=1)) == ("add", ["x"], 11)
    with pytest.raises(ToolDefinitionError, match=r"first parameter is 'self'.*tool\(instance.add\)"):
        tool(Counter.add)  # also what @tool inside a class body sees
    with pytest.raises(ToolDefinitionError, match="Tool 'sqrt': argument 'x' is positional-only"):
        tool(math.sqrt)  # builtins often are: the call would fail on every use, so building fails
    assert tool("sqrt", lambda x: math.sqrt(x), description="Square root.").run(x=9) == 3.0


def test_required_versus_optional_from_defaults():
    @tool
    def f(a: int, b: str = "x", c=None) -> str:
        """F."""
        return f"{a}{b}{c}"

    schema = f.args_schema.model_json_schema()
    assert schema["required"] == ["a"]
    assert f.args["c"] == {"default": None}  # unannotated: any type
    assert f.run(a=1, c=[1]) == "1x[1]"


def test_string_annotations_resolve_and_unknown_ones_are_named():
    def with_strings(a: "int", b: "list[str]") -> str:
        """Strings."""
        return f"{a}{b}"

    built = tool(with_strings)
    assert built.run(a="2", b=["x"]) == "2['x']"

    def broken(a: "NoSuchType") -> str:  # noqa: F821
        """Broken."""
        return a

    with pytest.raises(ToolDefinitionError) as info:
        tool(broken)
    assert str(info.value) == (
        "Tool 'broken': cannot resolve the type hint 'NoSuchType' of argument 'a'. "
        "Define that type at module level, or pass args_schema=..."
    )


def test_argument_names_that_shadow_pydantic_attributes():
    @tool
    def query_db(schema: str, json: bool = False, model_name: str = "m", copy: int = 0) -> str:
        """Query a database schema."""
        return f"{schema}{json}{model_name}{copy}"

    assert query_db.run(schema="public", copy=2) == "publicFalsem2"
    assert set(query_db.args) == {"schema", "json", "model_name", "copy"}


def test_field_default_with_constraints():
    @tool
    def page(n: int = Field(default=1, ge=1, description="Page number")) -> int:
        """Page."""
        return n

    assert page.run() == 1
    assert page.args["n"] == {"default": 1, "description": "Page number", "minimum": 1, "type": "integer"}
    with pytest.raises(ValueError, match=r"n: Input should be greater than or equal to 1 \(got 0\)"):
        page.run(n=0)


# -- JSON-schema dicts ----------------------------------------------------------------


def test_json_schema_dict_becomes_a_model_class():
    schema = {
        "title": "weather",
        "description": "Weather lookup.",
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City", "minLength": 2},
            "unit": {"enum": ["c", "f"], "default": "c"},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
            "hours": {"type": ["integer", "null"]},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            "where": {"$ref": "#/$defs/Point"},
            "extra": {"type": "object", "additionalProperties": {"type": "number"}},
            "kind": {"const": "fixed"},
            "either": {"anyOf": [{"type": "string"}, {"type": "boolean"}]},
            "inline": {"type": "object", "title": "Inline", "properties": {"x": {"type": "number"}}, "required": ["x"]},
        },
        "required": ["city", "days"],
        "$defs": {"Point": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]}},
    }
    model = model_from_json_schema(schema)
    assert model.__doc__ == "Weather lookup."
    ok = model.model_validate(
        {
            "city": "Kobe",
            "days": 3,
            "where": {"lat": 1},
            "extra": {"a": 1.5},
            "kind": "fixed",
            "either": True,
            "inline": {"x": 2},
        }
    )
    assert ok.unit == "c" and ok.hours is None and ok.where.lat == 1.0 and ok.inline.x == 2.0
    for bad in (
        {"city": "K", "days": 3},
        {"city": "Kobe", "days": 9},
        {"city": "Kobe", "days": 1, "unit": "k"},
        {"city": "Kobe", "days": 1, "tags": ["a", "b", "c"]},
        {"city": "Kobe", "days": 1, "kind": "x"},
    ):
        with pytest.raises(ValueError):
            model.model_validate(bad)
    rendered = model.model_json_schema()
    assert rendered["required"] == ["city", "days"]
    assert rendered["properties"]["city"]["description"] == "City"


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "array"}, "an args_schema dict must describe an object, got type 'array'"),
        (
            {"type": "object", "properties": {"x": {"$ref": "#/$defs/Missing"}}},
            "args_schema at args_schema.x: unresolved reference '#/$defs/Missing'",
        ),
        (
            {"type": "object", "properties": {"x": {"type": "decimal"}}},
            "args_schema at args_schema.x: unknown type 'decimal'",
        ),
        (
            {"type": "object", "properties": {"first-name": {"type": "string"}}},
            "args_schema at args_schema.first-name: property names must be Python identifiers",
        ),
    ],
)
def test_bad_json_schema_dicts_name_the_place(schema, message):
    with pytest.raises(
        ToolDefinitionError,
        match="^Tool 'w': " + message.replace("(", r"\(").replace("[", r"\[").replace("$", r"\$").replace(".", r"\."),
    ):
        tool("w", lambda **kw: kw, args_schema=schema, description="d")


def test_args_schema_of_wrong_type_is_rejected():
    from crew.tools import Tool

    with pytest.raises(ToolDefinitionError, match="must be a pydantic model class or a JSON-schema dict, got 42"):
        Tool(name="w", description="d", func=lambda: 1, args_schema=42)
    with pytest.raises(ToolDefinitionError, match="got <class 'int'>"):
        tool("w", args_schema=int, description="d")(lambda: 1)


# -- docstrings -----------------------------------------------------------------------


def test_google_docstring_parsing():
    parsed = parse_google_docstring(
        """Summary line.

        More detail.

        Args:
            a (int): First,
                continued.
            *args: Extra positionals.
            **kwargs: Extra keywords.

        Returns:
            Something.
        """
    )
    assert parsed.summary == "Summary line.\n\nMore detail."
    assert parsed.args == {"a": "First, continued.", "args": "Extra positionals.", "kwargs": "Extra keywords."}
    assert parsed.has_args_section
    assert parse_google_docstring(None).summary == ""
    assert not parse_google_docstring("Only a summary.").has_args_section


# -- names --------------------------------------------------------------------------


def test_sanitize_tool_name_rule():
    assert sanitize_tool_name("search_web-2") == "search_web-2"
    assert sanitize_tool_name("Search the web!") == "Search_the_web"
    assert sanitize_tool_name("  a  b  ") == "a_b"
    chinese = sanitize_tool_name("天气查询")
    assert chinese.startswith("tool_") and len(chinese) == 13
    assert sanitize_tool_name("股票查询") != chinese
    mixed = sanitize_tool_name("查询 weather")
    assert mixed.startswith("weather_")
    long = sanitize_tool_name("x" * 70 + " y")
    assert len(long) == 64
    for name in ("天气查询", "Search the web!", "x" * 70 + " y", "a.b/c"):
        cleaned = sanitize_tool_name(name)
        assert sanitize_tool_name(cleaned) == cleaned  # stable
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", cleaned)


def test_tool_name_is_sanitised_everywhere_the_model_sees_it():
    @tool("Weather Lookup")
    def weather(city: str) -> str:
        """Weather."""
        return city

    assert weather.name == "Weather Lookup"
    assert weather.tool_name == "Weather_Lookup"
    assert weather.to_openai_tool()["function"]["name"] == "Weather_Lookup"
    assert weather.describe().startswith("Tool Name: Weather_Lookup\n")
    result = weather.invoke({"name": "Weather_Lookup", "args": {"city": "x"}, "id": "c1", "type": "tool_call"})
    assert result.name == "Weather_Lookup"


# -- renderings -----------------------------------------------------------------------


def test_describe_block():
    @tool
    def add(a: int, b: int = 2) -> int:
        """Add two numbers."""
        return a + b

    assert add.describe() == (
        "Tool Name: add\n"
        'Tool Arguments: {"properties": {"a": {"type": "integer"}, "b": {"default": 2, "type": "integer"}}, '
        '"required": ["a"], "type": "object"}\n'
        "Tool Description: Add two numbers."
    )


def test_describe_mentions_the_result_schema():
    class Sum(BaseModel):
        total: int

    @tool(result_schema=Sum)
    def add(a: int) -> Sum:
        """Add."""
        return Sum(total=a)

    assert add.describe().endswith(
        'Tool Result: {"properties": {"total": {"type": "integer"}}, "required": ["total"], "type": "object"}'
    )


def test_to_openai_tool_plain_and_strict():
    plain = plan.to_openai_tool()
    assert plain["type"] == "function"
    assert plain["function"]["name"] == "plan"
    assert plain["function"]["description"] == "Plan a trip."
    assert "strict" not in plain["function"]
    strict = plan.to_openai_tool(strict=True)
    assert strict["function"]["strict"] is True
    params = strict["function"]["parameters"]
    assert params["required"] == ["trip", "mode", "days", "tags", "budget", "note"]
    assert params["additionalProperties"] is False
    for model in params["$defs"].values():
        assert model["required"] == list(model["properties"])
        assert model["additionalProperties"] is False
    assert plain["function"]["parameters"]["required"] == ["trip"]  # strict never alters the plain form
    json.dumps(strict)


class Tree(BaseModel):
    label: str
    parent: "Tree" = Field(default=None, description="Up one level")  # a $ref beside other keywords


def test_strict_mode_inlines_refs_with_siblings_and_drops_none_defaults_like_openais_sdk():
    @tool
    def route(
        start: Address = Field(description="Where to start"),
        unit: Literal["km", "mi"] = "km",
        via: Address | None = None,
        tree: Tree | None = None,
    ) -> str:
        """Route between places."""
        return ""

    params = route.to_openai_tool(strict=True)["function"]["parameters"]
    address = {
        "properties": {"street": {"type": "string"}, "city": {"default": "Osaka", "type": "string"}},
        "required": ["street", "city"],
        "type": "object",
        "additionalProperties": False,
    }
    assert params["properties"]["start"] == {**address, "description": "Where to start"}
    assert params["properties"]["via"] == {"anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]}
    parent = params["$defs"]["Tree"]["properties"]["parent"]  # inlined once, then the cycle stops
    assert parent["description"] == "Up one level" and "default" not in parent
    assert parent["properties"]["parent"] == {"$ref": "#/$defs/Tree", "description": "Up one level"}
    assert route.to_openai_tool()["function"]["parameters"]["properties"]["start"] == {
        "$ref": "#/$defs/Address",
        "description": "Where to start",
    }


def test_to_openai_tool_without_arguments_and_with_extras():
    @tool(extras={"cache_control": {"type": "ephemeral"}})
    def now() -> str:
        """Current time."""
        return "noon"

    assert now.to_openai_tool() == {
        "type": "function",
        "function": {"name": "now", "description": "Current time.", "parameters": {"properties": {}, "type": "object"}},
        "cache_control": {"type": "ephemeral"},
    }
    assert now.to_openai_tool(strict=True)["function"]["parameters"] == {
        "properties": {},
        "type": "object",
        "required": [],
        "additionalProperties": False,
    }


def test_titles_dropped_but_properties_named_title_kept():
    @tool
    def publish(title: str, body: str = "") -> str:
        """Publish a post."""
        return title

    assert publish.args == {"title": {"type": "string"}, "body": {"default": "", "type": "string"}}


def test_renderings_return_fresh_dicts():
    first = plan.to_openai_tool()
    first["function"]["parameters"]["properties"].clear()
    assert plan.to_openai_tool()["function"]["parameters"]["properties"]


def test_args_hint_lists_types_and_defaults():
    assert plan.args_hint() == (
        'trip (Trip object, required), mode ("walk" or "train", default "train"), '
        'days (integer or null, default null), tags (list of string, default ["fun"]), '
        'budget (number or null, default null), note (string, default "")'
    )


def test_validated_fields_mean_what_the_whole_model_means():
    """The dict-only validation shortcut (tools/fields.py) gives what model validation gives, or is not used."""
    from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

    from crew.tools.calling import _VALIDATORS, validate_fields

    class Address(BaseModel):
        city: str

    class Plain(BaseModel):
        name: str = Field(min_length=2)
        count: int = 3
        where: Address | None = None

        @field_validator("name")
        @classmethod
        def _upper(cls, value: str) -> str:
            return value.upper()

    class Extras(BaseModel):
        model_config = ConfigDict(extra="allow", str_strip_whitespace=True)
        name: str

    class Checked(BaseModel):
        low: int
        high: int

        @model_validator(mode="after")
        def _ordered(self) -> "Checked":
            if self.low > self.high:
                raise ValueError("low above high")
            return self

    class Forbidding(BaseModel):
        model_config = ConfigDict(extra="forbid")
        name: str

    out = validate_fields(Plain, {"name": "ab", "where": {"city": "Oslo"}, "invented": 1})
    assert out == {"name": "AB", "count": 3, "where": Address(city="Oslo")} and isinstance(out["where"], Address)
    assert validate_fields(Extras, {"name": "  x ", "more": 1}) == {"name": "x", "more": 1}
    assert validate_fields(Checked, {"low": 1, "high": 2}) == {"low": 1, "high": 2}
    with pytest.raises(ValidationError, match="low above high"):  # the model validator still runs
        validate_fields(Checked, {"low": 3, "high": 2})
    with pytest.raises(ValidationError) as caught:
        validate_fields(Plain, {"name": "a", "count": "many"})
    assert {e["loc"] for e in caught.value.errors()} == {("name",), ("count",)}
    with pytest.raises(ValidationError):
        validate_fields(Forbidding, {"name": "x", "extra": 1})
    assert _VALIDATORS[Plain] is not None and _VALIDATORS[Extras] is not None
    assert _VALIDATORS[Checked] is None and _VALIDATORS[Forbidding] is None  # the model's own validator
