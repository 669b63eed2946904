"""example_value: values generated from JSON schemas validate against the pydantic models that made them."""

import datetime as dt
import enum
import ipaddress
import json
import random
import uuid
from decimal import Decimal
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field, HttpUrl, TypeAdapter

from crew.testing import example_value


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Address(BaseModel):
    street: str = Field(min_length=3, max_length=40)
    zip_code: str = Field(pattern=r"^\d{5}(-\d{4})?$")
    country: Literal["NO", "SE", "DK"] = "NO"


class Person(BaseModel):
    name: str
    age: int = Field(ge=18, le=120)
    score: float = Field(gt=0, lt=1)
    step: int = Field(multiple_of=5, ge=7, le=40)
    ratio: float = Field(multiple_of=0.25, ge=1, le=3)
    color: Color
    tags: list[str] = Field(min_length=2, max_length=4)
    ids: set[int]
    pair: tuple[int, str]
    home: Address
    other_homes: list[Address] = []
    nickname: str | None = None
    counts: dict[str, int]
    born: dt.date
    seen: dt.datetime
    alarm: dt.time
    wait: dt.timedelta
    key: uuid.UUID
    site: HttpUrl
    ip: ipaddress.IPv4Address
    ip6: ipaddress.IPv6Address
    price: Decimal
    ticker: Annotated[str, Field(pattern=r"^[A-Z]{1,5}$")]
    code: Annotated[str, Field(pattern=r"^(EU|US)-[0-9]{3}[a-f]?$")]
    either: int | Address
    anything: object = None


class Node(BaseModel):
    value: int
    children: list["Node"] = []
    parent: "Node | None" = None


@pytest.mark.parametrize("seed", range(25))
def test_values_validate_against_a_wide_model(seed):
    schema = Person.model_json_schema()
    value = example_value(schema, random.Random(seed))
    Person.model_validate(value)  # raises if any generated field is invalid


@pytest.mark.parametrize("seed", range(10))
def test_recursive_models_terminate_and_validate(seed):
    value = example_value(Node.model_json_schema(), random.Random(seed))
    Node.model_validate(value)


def test_same_seed_same_value_other_seed_other_value():
    schema = Person.model_json_schema()
    assert example_value(schema, random.Random(3)) == example_value(schema, random.Random(3))
    values = {str(example_value(schema, random.Random(s))) for s in range(5)}
    assert len(values) == 5


def test_required_fields_always_present_and_optionals_sometimes():
    schema = Person.model_json_schema()
    required = set(schema["required"])
    seen_optional = set()
    for seed in range(30):
        value = example_value(schema, random.Random(seed))
        assert required <= set(value)
        seen_optional |= set(value) - required
    assert {"nickname", "other_homes"} <= seen_optional


@pytest.mark.parametrize(
    ("schema", "check"),
    [
        ({"type": "integer", "exclusiveMinimum": 3, "exclusiveMaximum": 5}, lambda v: v == 4),
        ({"type": "number", "minimum": -2.5, "maximum": -2.5}, lambda v: v == -2.5),
        ({"type": "string", "minLength": 30}, lambda v: len(v) >= 30),
        ({"type": "string", "maxLength": 2}, lambda v: 0 < len(v) <= 2),
        ({"type": ["null", "boolean"]}, lambda v: isinstance(v, bool)),
        ({"const": {"k": 1}}, lambda v: v == {"k": 1}),
        ({"enum": [1, "two", None]}, lambda v: v in (1, "two", None)),
        (
            {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False},
            lambda v: isinstance(v[0], int) and isinstance(v[1], str) and len(v) == 2,
        ),
        (
            {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": True, "minItems": 2},
            lambda v: sorted(v) == ["a", "b"],
        ),
        (
            {
                "allOf": [
                    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
                    {"properties": {"b": {"type": "string"}}, "required": ["b"]},
                ]
            },
            lambda v: isinstance(v["a"], int) and isinstance(v["b"], str),
        ),
        ({"type": "string", "format": "email"}, lambda v: "@" in v),
        ({}, lambda v: isinstance(v, str)),
    ],
)
def test_plain_json_schemas(schema, check):
    assert check(example_value(schema, random.Random(0)))


def test_format_values_parse_as_their_types():
    for fmt, kind in [
        ("date", dt.date),
        ("date-time", dt.datetime),
        ("time", dt.time),
        ("duration", dt.timedelta),
        ("uuid", uuid.UUID),
        ("ipv4", ipaddress.IPv4Address),
        ("ipv6", ipaddress.IPv6Address),
    ]:
        TypeAdapter(kind).validate_python(example_value({"type": "string", "format": fmt}))


def test_unsatisfiable_schemas_say_where():
    with pytest.raises(ValueError, match="empty numeric range"):
        example_value({"type": "integer", "minimum": 5, "maximum": 1})
    with pytest.raises(ValueError, match="unsupported JSON schema type 'tensor'"):
        example_value({"type": "object", "properties": {"t": {"type": "tensor"}}, "required": ["t"]})
    with pytest.raises(ValueError, match="only local"):
        example_value({"$ref": "https://example.com/schema.json"})


@pytest.mark.parametrize(
    "kind",
    [
        dict[Literal["a", "b"], int],  # propertyNames: enum
        dict[Color, Address],  # propertyNames: $ref to an enum
        dict[Annotated[str, Field(pattern=r"^k[0-9]$")], int],  # patternProperties
        Annotated[dict[str, int], Field(min_length=3)],  # minProperties
    ],
)
def test_map_keys_follow_the_key_schema(kind):
    adapter = TypeAdapter(kind)
    schema = adapter.json_schema()
    for seed in range(20):
        value = example_value(schema, random.Random(seed))
        assert value, schema  # a typed map shows at least one entry
        adapter.validate_json(json.dumps(value))


def test_min_properties_is_met_without_breaking_a_closed_object():
    open_object = {"type": "object", "properties": {"a": {"type": "integer"}}, "minProperties": 3}
    assert len(example_value(open_object, random.Random(0))) >= 3
    closed = {**open_object, "minProperties": 0, "additionalProperties": False}
    assert set(example_value(closed, random.Random(1))) <= {"a"}
