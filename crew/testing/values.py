"""Valid example values for a JSON schema, so TestModel can call any tool and answer any format.

The schemas come from pydantic (tool arguments, ``output_pydantic``), from users
(JSON-schema dicts) or from MCP servers, so this covers what those produce:
``$ref``/``$defs``, ``anyOf``/``oneOf``/``allOf``, enums and consts, numeric bounds and
``multipleOf``, string lengths, formats and patterns, arrays (``prefixItems``,
``uniqueItems``, item counts), objects with required and optional properties,
``additionalProperties`` maps, and recursive models (bounded by depth).

What a schema offers comes first (``crew.testing.offered``: a const, the run's input of
the argument's name, examples, a default, an enum); only then is a value invented. Values
depend only on the schema, the inputs and the random generator, so a seed fixes them.
"""

from __future__ import annotations

import math
import random
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from crew.testing.offered import NOTHING, described, offered
from crew.testing.patterns import Unsupported, sample

__all__ = ["example_value"]

_MAX_DEPTH = 6

_FORMATS: dict[str, Any] = {
    "date": lambda r: f"2024-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
    "date-time": lambda r: f"2024-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:30:00Z",
    "time": lambda r: f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:00",
    "duration": lambda r: f"PT{r.randint(1, 59)}M",
    "email": lambda r: f"user{r.randint(1, 99)}@example.com",
    "idn-email": lambda r: f"user{r.randint(1, 99)}@example.com",
    "uri": lambda r: f"https://example.com/item/{r.randint(1, 999)}",
    "url": lambda r: f"https://example.com/item/{r.randint(1, 999)}",
    "iri": lambda r: f"https://example.com/item/{r.randint(1, 999)}",
    "uri-reference": lambda r: f"/item/{r.randint(1, 999)}",
    "hostname": lambda r: f"host{r.randint(1, 99)}.example.com",
    "ipv4": lambda r: f"192.0.2.{r.randint(1, 254)}",
    "ipv6": lambda r: f"2001:db8::{r.randint(1, 0xFFFF):x}",
    "ipvanyaddress": lambda r: f"192.0.2.{r.randint(1, 254)}",
    "ipv4network": lambda r: "192.0.2.0/24",
    "ipv6network": lambda r: "2001:db8::/32",
    "ipvanynetwork": lambda r: "192.0.2.0/24",
    "ipv4interface": lambda r: f"192.0.2.{r.randint(1, 254)}/24",
    "uuid": lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4)),
    "uuid4": lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4)),
    "byte": lambda r: "ZXhhbXBsZQ==",
}


@dataclass(frozen=True, slots=True)
class _Walk:
    """What every step of one generation shares: the random source, the root for ``$ref``s, the run's inputs."""

    rng: random.Random
    root: dict[str, Any]
    inputs: Mapping[str, Any] | None


def example_value(
    schema: dict[str, Any] | bool,
    rng: random.Random | None = None,
    *,
    root: dict[str, Any] | None = None,
    name: str = "",
    depth: int = 0,
    inputs: Mapping[str, Any] | None = None,
) -> Any:
    """A value valid for ``schema`` (``root`` resolves ``$ref``s; defaults to ``schema`` itself).

    ``inputs`` (a crew's kickoff inputs) are used for properties of their name, where they fit.
    """
    if schema is False:
        raise ValueError(f"no value satisfies the schema 'false' (at {name or 'root'})")
    if root is None:
        root = schema if isinstance(schema, dict) else {}
    walk = _Walk(rng or random.Random(0), root, inputs)
    return _value(walk, schema, name, depth)


def _value(walk: _Walk, schema: Any, name: str, depth: int) -> Any:
    if schema is True or schema == {}:
        schema = {}
    elif schema is False:
        raise ValueError(f"no value satisfies the schema 'false' (at {name or 'root'})")
    schema = _resolve(schema, walk.root)
    chosen = offered(schema, name, walk.inputs, walk.rng)
    if chosen is not NOTHING:
        return chosen
    if not schema:
        return f"example {name}".strip()
    if "allOf" in schema:
        merged = _merge([_resolve(s, walk.root) for s in schema["allOf"]], schema)
        return _value(walk, merged, name, depth)
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return _value(walk, _option(walk, options, depth), name, depth + 1)
    kind = _kind(schema)
    maker = _MAKERS.get(kind)
    if maker is None:
        raise ValueError(f"unsupported JSON schema type {kind!r} (at {name or 'root'})")
    return maker(walk, schema, name, depth)


def _option(walk: _Walk, options: list[Any], depth: int) -> dict[str, Any]:
    """The branch of an ``anyOf``/``oneOf`` to follow: the first non-null one, null once deep (stop recursing)."""
    resolved = [_resolve(o, walk.root) for o in options]
    nulls = [o for o in resolved if o.get("type") == "null"]
    non_null = [o for o in resolved if o.get("type") != "null"]
    return nulls[0] if nulls and (depth >= _MAX_DEPTH or not non_null) else non_null[0]


def _kind(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        return next((k for k in kind if k != "null"), "null")
    if kind is not None:
        return kind
    if "properties" in schema or "additionalProperties" in schema:
        return "object"
    return "array" if "items" in schema or "prefixItems" in schema else "string"


def _resolve(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    """Follow local ``$ref``s (``#/$defs/X``, ``#/definitions/X``); siblings of the ref win."""
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#"):
            raise ValueError(f"only local $ref are supported, got {ref!r}")
        target: Any = root
        for part in filter(None, ref[1:].split("/")):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        seen += 1
        if seen > 50:
            raise ValueError(f"$ref cycle at {ref!r}")
    return schema if isinstance(schema, dict) else {}


def _merge(parts: list[dict[str, Any]], outer: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {k: v for k, v in outer.items() if k != "allOf"}
    for part in parts:
        for key, value in part.items():
            if key == "properties":
                merged["properties"] = {**merged.get("properties", {}), **value}
            elif key == "required":
                merged["required"] = sorted(set(merged.get("required", [])) | set(value))
            else:
                merged.setdefault(key, value)
    return merged


def _string(walk: _Walk, schema: dict[str, Any], name: str, depth: int) -> str:
    fmt = schema.get("format")
    if fmt in _FORMATS:
        return _FORMATS[fmt](walk.rng)
    hinted = described(schema)
    if hinted is not None:
        return hinted
    pattern = schema.get("pattern")
    if pattern:
        return _from_pattern(pattern, walk.rng, schema.get("minLength", 0), schema.get("maxLength"))
    text = f"example {name}".strip() if name else "example"
    text = f"{text} {walk.rng.randint(1, 99)}"
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    if len(text) < low:
        text += "x" * (low - len(text))
    if high is not None and len(text) > high:
        text = text[:high]
    return text


def _bounds(schema: dict[str, Any], integral: bool) -> tuple[float, float]:
    step = 1 if integral else 1e-6
    low = schema.get("minimum", -math.inf)
    high = schema.get("maximum", math.inf)
    exclusive_low, exclusive_high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if exclusive_low is not None and not isinstance(exclusive_low, bool):
        low = max(low, exclusive_low + step)
    if exclusive_high is not None and not isinstance(exclusive_high, bool):
        high = min(high, exclusive_high - step)
    if low == -math.inf and high == math.inf:
        low, high = 0, 100
    elif low == -math.inf:
        low = high - 100
    elif high == math.inf:
        high = low + 100
    if low > high:
        raise ValueError(f"empty numeric range [{low}, {high}]")
    return low, high


def _integer(walk: _Walk, schema: dict[str, Any], name: str, depth: int) -> int:
    low, high = _bounds(schema, integral=True)
    low, high = math.ceil(low), math.floor(high)
    step = schema.get("multipleOf")
    if step:
        first, last = math.ceil(low / step), math.floor(high / step)
        return int(walk.rng.randint(first, last) * step)
    return walk.rng.randint(low, high)


def _number(walk: _Walk, schema: dict[str, Any], name: str, depth: int) -> float | int:
    low, high = _bounds(schema, integral=False)
    step = schema.get("multipleOf")
    if step:
        first, last = math.ceil(low / step), math.floor(high / step)
        value = walk.rng.randint(first, last) * step
        return round(value, 10) if isinstance(value, float) else value
    value = round(walk.rng.uniform(low, high), 2)
    return min(max(value, low), high)


def _array(walk: _Walk, schema: dict[str, Any], name: str, depth: int) -> list[Any]:
    prefix = schema.get("prefixItems") or []
    items = schema.get("items", {} if not prefix else False)
    low = schema.get("minItems", 0)
    high = schema.get("maxItems")
    count = max(low, len(prefix) if items is False else (low if depth >= _MAX_DEPTH else 2))
    if high is not None:
        count = min(count, high)
    out = [_value(walk, s, name, depth + 1) for s in prefix[:count]]
    attempts = 0
    while len(out) < count and items is not False:
        value = _value(walk, items, name, depth + 1)
        attempts += 1
        if schema.get("uniqueItems") and value in out:
            if attempts < 50:
                continue
            break  # the item schema admits too few values; stop at what we have
        out.append(value)
    return out


def _object(walk: _Walk, schema: dict[str, Any], name: str, depth: int) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    out: dict[str, Any] = {}
    for key, sub in properties.items():
        if key in required or (depth < _MAX_DEPTH - 1 and walk.rng.random() < 0.5):
            out[key] = _value(walk, sub, key, depth + 1)
    _add_entries(walk, schema, out, depth)
    return out


def _add_entries(walk: _Walk, schema: dict[str, Any], out: dict[str, Any], depth: int) -> None:
    """More keys: a map's entries (``additionalProperties`` / ``patternProperties``), or up to ``minProperties``."""
    extra, names_schema = schema.get("additionalProperties"), schema.get("propertyNames")
    value_schema = extra if isinstance(extra, dict) else None if extra is False else {}
    patterns = schema.get("patternProperties") or {}
    if patterns:
        pattern, value_schema = next(iter(patterns.items()))
        names_schema = {"pattern": pattern}
    wanted = schema.get("minProperties", 0) - len(out)
    if not schema.get("properties") and (isinstance(extra, dict) or patterns) and depth < _MAX_DEPTH:
        wanted = max(1, wanted)  # a typed map: show one entry
    if wanted > 0 and value_schema is not None:
        for key in _key_names(walk, names_schema, taken=out)[:wanted]:
            out[key] = _value(walk, value_schema, key, depth + 1)


def _key_names(walk: _Walk, names_schema: Any, taken: dict[str, Any]) -> list[str]:
    """Fresh keys for a map, valid for ``propertyNames`` (``dict[Literal[...], T]``, enum or pattern keys)."""
    names_schema = _resolve(names_schema, walk.root) if isinstance(names_schema, dict) else {}
    if names_schema.get("enum") or "const" in names_schema:
        keys = names_schema.get("enum") or [names_schema["const"]]
        return [str(k) for k in keys if str(k) not in taken]
    if names_schema:
        key_schema = {"type": "string", **names_schema}
        keys = [str(_value(walk, key_schema, f"key{i + 1}", _MAX_DEPTH)) for i in range(8)]
        return list(dict.fromkeys(k for k in keys if k not in taken))
    return [f"key{i + 1}" for i in range(len(taken), len(taken) + 8)]


_MAKERS: dict[str, Callable[[_Walk, dict[str, Any], str, int], Any]] = {
    "string": _string,
    "integer": _integer,
    "number": _number,
    "boolean": lambda walk, *_: walk.rng.random() < 0.5,
    "null": lambda *_: None,
    "array": _array,
    "object": _object,
}


# -- strings matching a regular expression -------------------------------------------

_GUESSES = ("example", "abc", "ABC", "a", "A", "1", "123", "abc123", "2024-01-15", "user@example.com", "x-1")


def _from_pattern(pattern: str, rng: random.Random, min_len: int, max_len: int | None) -> str:
    """A string that ``re.search(pattern, s)`` accepts: generated from the pattern, else a common string.

    A pattern beyond the generator's subset, or one no common string matches, gets
    ``"example"``: the tool's own validation then names the argument, and the model reads it.
    """
    try:
        compiled = re.compile(pattern)
    except re.error:
        return "example"
    candidates: list[str] = []
    try:
        candidates = [sample(pattern, random.Random(rng.random())) for _ in range(8)]
    except Unsupported:
        candidates = []
    for text in [*candidates, *_GUESSES]:
        if compiled.search(text) and len(text) >= min_len and (max_len is None or len(text) <= max_len):
            return text
    return "example"
