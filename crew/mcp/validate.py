"""Checking arguments against an MCP server's JSON schema: fast for what servers write, exact always.

``jsonschema`` (which the SDK already depends on) is the judge, but it costs ~25 µs per
call even for ``{"a": 1}``: half of what crew may add to an MCP call. Most servers' schemas
use a small set of keywords, so a schema made only of those is compiled once into plain
Python checks that answer "valid" in about a microsecond. The compiled check may only ever
err towards "invalid": then jsonschema looks again and writes the error messages, so the
answer and the wording are always jsonschema's. Any keyword outside the set, a ``$ref``,
or a ``$schema`` naming another draft, and the schema goes to jsonschema alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ArgumentChecker"]

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"})
_DRAFTS = ("https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#")


class ArgumentChecker:
    """``problems(args)``: {} when valid, else where -> message (jsonschema's wording)."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self._fast = _compile_root(schema)
        self._full: Any = None  # the jsonschema validator, built on first need (its import costs ~50 ms)

    def problems(self, args: Any) -> dict[str, str]:
        if self._fast is not None and self._fast(args):
            return {}
        validator = self._validator()
        if validator is None:
            return {}
        out: dict[str, str] = {}
        for error in validator.iter_errors(args):
            where = ".".join(str(part) for part in error.absolute_path) or "arguments"
            out[where] = f"{out[where]}; {error.message}" if where in out else error.message
        return out

    def _validator(self) -> Any:
        if self._full is None:
            from jsonschema import exceptions, validators

            try:
                cls = validators.validator_for(self.schema)
                cls.check_schema(self.schema)
                self._full = cls(self.schema)
            except exceptions.SchemaError:  # a broken schema: only the server can say what it accepts
                self._full = False
        return self._full or None


def _compile_root(schema: Any) -> Check | None:
    if not isinstance(schema, dict):
        return None
    if "$schema" in schema and schema["$schema"] not in _DRAFTS:
        return None
    return _compile({k: v for k, v in schema.items() if k not in ("$schema", "$id")})


def _compile(schema: Any) -> Check | None:
    """Plain checks for ``schema``, or None when it uses anything outside the supported keywords."""
    if schema is True or schema == {}:
        return _anything
    if not isinstance(schema, dict):
        return None
    checks: list[Check] = []
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        check = _keyword(key, value, schema)
        if check is None:
            return None
        if check is not _anything:
            checks.append(check)
    if not checks:
        return _anything
    if len(checks) == 1:
        return checks[0]
    return lambda value: all(check(value) for check in checks)


def _keyword(key: str, value: Any, schema: dict[str, Any]) -> Check | None:
    if key in _BOUNDS:
        return _BOUNDS[key](value) if _is_number(value) else None
    build = _KEYWORDS.get(key)
    return build(value, schema) if build is not None else None


def _required(value: Any, _schema: dict[str, Any]) -> Check | None:
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        return None
    needed = tuple(value)
    return lambda v: not isinstance(v, dict) or all(name in v for name in needed)


def _items(value: Any, _schema: dict[str, Any]) -> Check | None:
    item = _compile(value)
    if item is None:
        return None
    return lambda v: not isinstance(v, list) or all(item(x) for x in v)


def _enum(value: Any, _schema: dict[str, Any]) -> Check | None:
    if not isinstance(value, list):
        return None
    options = list(value)
    return lambda v: any(_same(v, option) for option in options)


def _const(value: Any, _schema: dict[str, Any]) -> Check | None:
    return lambda v: _same(v, value)


def _any_of(value: Any, _schema: dict[str, Any]) -> Check | None:
    if not isinstance(value, list) or not value:
        return None
    branches = [_compile(sub) for sub in value]
    if any(branch is None for branch in branches):
        return None
    return lambda v: any(branch(v) for branch in branches)  # type: ignore[misc]


def _type(value: Any, _schema: dict[str, Any]) -> Check | None:
    names = value if isinstance(value, list) else [value]
    checks = [_TYPES.get(name) for name in names]
    if not checks or any(check is None for check in checks):
        return None
    if len(checks) == 1:
        return checks[0]
    return lambda v: any(check(v) for check in checks)  # type: ignore[misc]


def _properties(value: Any, _schema: dict[str, Any]) -> Check | None:
    if not isinstance(value, dict):
        return None
    compiled: dict[str, Check] = {}
    for name, sub in value.items():
        check = _compile(sub)
        if check is None:
            return None
        if check is not _anything:
            compiled[name] = check
    items = tuple(compiled.items())
    return lambda v: not isinstance(v, dict) or all(name not in v or check(v[name]) for name, check in items)


def _additional(value: Any, schema: dict[str, Any]) -> Check | None:
    if value is True:
        return _anything
    properties = schema.get("properties", {})
    known = frozenset(properties) if isinstance(properties, dict) else frozenset()
    if value is False:
        return lambda v: not isinstance(v, dict) or known.issuperset(v)
    extra = _compile(value)
    if extra is None:
        return None
    return lambda v: not isinstance(v, dict) or all(extra(item) for key, item in v.items() if key not in known)


def _anything(value: Any) -> bool:
    return True


def _same(value: Any, option: Any) -> bool:
    """JSON equality: 1 == 1.0 but True != 1, and the same for nested values."""
    if isinstance(value, bool) or isinstance(option, bool):
        return type(value) is type(option) and value == option
    if isinstance(value, list) and isinstance(option, list):
        return len(value) == len(option) and all(_same(a, b) for a, b in zip(value, option, strict=True))
    if isinstance(value, dict) and isinstance(option, dict):
        return value.keys() == option.keys() and all(_same(value[k], option[k]) for k in value)
    if type(value) in (int, float) and type(option) in (int, float):
        return value == option
    return type(value) is type(option) and value == option


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


_TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),  # 1.0 goes to jsonschema
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}

_BOUNDS: dict[str, Callable[[float], Check]] = {
    "minimum": lambda n: lambda v: not _is_number(v) or v >= n,
    "maximum": lambda n: lambda v: not _is_number(v) or v <= n,
    "exclusiveMinimum": lambda n: lambda v: not _is_number(v) or v > n,
    "exclusiveMaximum": lambda n: lambda v: not _is_number(v) or v < n,
    "minLength": lambda n: lambda v: not isinstance(v, str) or len(v) >= n,
    "maxLength": lambda n: lambda v: not isinstance(v, str) or len(v) <= n,
    "minItems": lambda n: lambda v: not isinstance(v, list) or len(v) >= n,
    "maxItems": lambda n: lambda v: not isinstance(v, list) or len(v) <= n,
}

_KEYWORDS: dict[str, Callable[[Any, dict[str, Any]], Check | None]] = {
    "type": _type,
    "properties": _properties,
    "required": _required,
    "additionalProperties": _additional,
    "items": _items,
    "enum": _enum,
    "const": _const,
    "anyOf": _any_of,
}
"""The keywords compiled to plain checks (with ``_BOUNDS``); any other one leaves the schema to jsonschema."""
