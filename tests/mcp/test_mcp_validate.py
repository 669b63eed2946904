"""The argument check of MCP tools gives jsonschema's verdict on every schema and value tried,
and takes its fast path on the schemas servers usually write."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from jsonschema import validators

from crew.mcp.validate import ArgumentChecker

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"default": 2, "type": "integer"}},
        "required": ["a"],
    },
    {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 5},
            "limit": {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 10}, {"type": "null"}], "default": None},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "mode": {"enum": ["fast", "slow", 1, True]},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "flag": {"type": "boolean"},
            "kind": {"const": "x"},
            "meta": {"type": "object", "additionalProperties": {"type": "integer"}},
            "either": {"type": ["string", "null"]},
        },
    },
    {"type": "object", "properties": {"p": {"type": "string", "pattern": "^a"}}},  # pattern: jsonschema alone
    {"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}, "$defs": {"X": {"type": "integer"}}},
]

VALUES: list[Any] = [
    {},
    {"a": 1},
    {"a": 1.0},
    {"a": True},
    {"a": "1"},
    {"a": 1, "b": None},
    {"a": 1, "zzz": 2},
    {"query": ""},
    {"query": "hello"},
    {"query": "toolong"},
    {"query": "q", "limit": None},
    {"query": "q", "limit": 0},
    {"query": "q", "limit": 10},
    {"query": "q", "limit": 3.0},
    {"query": "q", "tags": ["a", "b"]},
    {"query": "q", "tags": ["a", 1]},
    {"query": "q", "tags": ["a", "b", "c"]},
    {"query": "q", "extra": 1},
    {"mode": "fast"},
    {"mode": 1.0},
    {"mode": True},
    {"mode": 1, "flag": 0},
    {"ratio": 0},
    {"ratio": 0.5},
    {"ratio": 1},
    {"kind": "x", "flag": False},
    {"kind": "y"},
    {"meta": {"a": 1, "b": "2"}},
    {"meta": {"a": 1}},
    {"either": None},
    {"either": 3},
    {"p": "abc"},
    {"p": "cba"},
    {"x": 1},
    {"x": "1"},
    [],
    "text",
    None,
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_the_verdict_is_jsonschemas(schema: dict[str, Any]) -> None:
    checker = ArgumentChecker(schema)
    judge = validators.validator_for(schema)(schema)
    for value in VALUES:
        assert (checker.problems(value) == {}) == judge.is_valid(value), (schema, value)


def test_common_schemas_take_the_fast_path_and_others_do_not() -> None:
    fast = [ArgumentChecker(s)._fast for s in SCHEMAS]
    assert [f is not None for f in fast] == [True, True, True, False, False]
    assert ArgumentChecker({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"})._fast is None


def test_problems_name_each_argument_in_jsonschemas_words() -> None:
    checker = ArgumentChecker(SCHEMAS[1])
    problems = checker.problems({"query": "toolong", "limit": 0, "tags": ["a", 1], "extra": True})
    assert problems["query"] == "'toolong' is too long"
    assert "limit" in problems and "tags.1" in problems
    assert "Additional properties are not allowed ('extra' was unexpected)" in problems["arguments"]


def test_a_broken_schema_leaves_the_judgement_to_the_server() -> None:
    checker = ArgumentChecker({"type": "object", "properties": {"a": {"type": "wat"}}})
    assert checker.problems({"a": 1}) == {}


def test_random_combinations_agree_with_jsonschema() -> None:
    schema = SCHEMAS[2]
    judge = validators.validator_for(schema)(schema)
    checker = ArgumentChecker(schema)
    samples = [None, 0, 1, 1.5, True, False, "x", "fast", [], [1], {}, {"a": 1}]
    keys = ["mode", "ratio", "flag", "kind", "meta", "either"]
    for first, second in itertools.product(keys, repeat=2):
        for a, b in itertools.product(samples, repeat=2):
            value = {first: a, second: b}
            assert (checker.problems(value) == {}) == judge.is_valid(value), value
