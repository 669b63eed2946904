"""A JSON-schema dict (read back from storage or YAML) turned into a pydantic model class.

The inverse of ``model_json_schema()`` for the subset tools use: scalar types, enums
and constants, arrays, nested objects (inline or via ``$defs``/``$ref``), unions,
nullable types, defaults, descriptions and the common numeric/string/array bounds.
"""

from __future__ import annotations

import keyword
import warnings
from typing import Any, Literal, Optional, Union, cast

from pydantic import BaseModel, Field, create_model

from crew.errors import ToolDefinitionError
from crew.tools.schema import args_config

_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "null": type(None)}
_BOUNDS = {
    "minimum": "ge",
    "maximum": "le",
    "exclusiveMinimum": "gt",
    "exclusiveMaximum": "lt",
    "minLength": "min_length",
    "maxLength": "max_length",
    "pattern": "pattern",
    "minItems": "min_length",
    "maxItems": "max_length",
    "multipleOf": "multiple_of",
}


def model_from_json_schema(schema: dict[str, Any], name: str = "ToolArgs", *, tool_name: str = "?") -> type[BaseModel]:
    """Build the argument model described by ``schema`` (an object schema)."""
    if not isinstance(schema, dict):  # pyright: ignore[reportUnnecessaryIsInstance] - callers outside typed code pass anything
        raise ToolDefinitionError(f"Tool '{tool_name}': args_schema must be a pydantic model class or a dict")
    if schema.get("type", "object") != "object":
        raise ToolDefinitionError(
            f"Tool '{tool_name}': an args_schema dict must describe an object, got type {schema.get('type')!r}"
        )
    builder = _Builder(schema.get("$defs") or schema.get("definitions") or {}, tool_name)
    return builder.model(schema, schema.get("title") or name, path="args_schema")


class _Builder:
    def __init__(self, defs: dict[str, Any], tool_name: str) -> None:
        self.defs = defs
        self.tool_name = tool_name
        self.built: dict[str, type[BaseModel]] = {}
        self.building: set[str] = set()

    def fail(self, path: str, problem: str) -> ToolDefinitionError:
        return ToolDefinitionError(f"Tool '{self.tool_name}': args_schema at {path}: {problem}")

    def model(self, schema: dict[str, Any], name: str, path: str) -> type[BaseModel]:
        required = set(schema.get("required", ()))
        fields: dict[str, Any] = {}
        for prop, sub in schema.get("properties", {}).items():
            where = f"{path}.{prop}"
            if not prop.isidentifier() or keyword.iskeyword(prop) or prop.startswith("_"):
                raise self.fail(where, "property names must be Python identifiers not starting with '_'")
            if not isinstance(sub, dict):
                raise self.fail(where, "expected a schema object")
            sub = cast("dict[str, Any]", sub)
            annotation = self.annotation(sub, where, prop)
            kwargs: dict[str, Any] = {arg: sub[key] for key, arg in _BOUNDS.items() if key in sub}
            if "description" in sub:
                kwargs["description"] = sub["description"]
            if "default" in sub:
                kwargs["default"] = sub["default"]
            elif prop not in required:
                annotation, kwargs["default"] = Optional[annotation], None  # noqa: UP045 - runtime type
            fields[prop] = (annotation, Field(**kwargs))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = create_model(_class_name(name), __config__=args_config(schema.get("title") or name), **fields)
        except Exception as exc:
            raise self.fail(path, str(exc)) from exc
        if schema.get("description"):
            model.__doc__ = schema["description"]
        return model

    def annotation(self, sub: dict[str, Any], path: str, name: str) -> Any:
        if "$ref" in sub:
            return self.ref(sub["$ref"], path)
        if "enum" in sub:
            return Literal[tuple(sub["enum"])]
        if "const" in sub:
            return Literal[sub["const"]]
        for key in ("anyOf", "oneOf"):
            if key in sub:
                return _union([self.annotation(s, f"{path}.{key}[{i}]", name) for i, s in enumerate(sub[key])])
        if len(sub.get("allOf", ())) == 1:
            return self.annotation(sub["allOf"][0], path, name)
        kind = sub.get("type")
        if isinstance(kind, list):
            return _union([self.annotation({**sub, "type": k}, path, name) for k in cast("list[str]", kind)])
        if kind in _SCALARS:
            return _SCALARS[kind]
        return self.container(kind, sub, path, name)

    def container(self, kind: Any, sub: dict[str, Any], path: str, name: str) -> Any:
        """An array, an object (a model when it lists properties), or anything (no type given)."""
        if kind == "array":
            items = sub.get("items")
            if not isinstance(items, dict):
                return list[Any]
            return list[self.annotation(cast("dict[str, Any]", items), f"{path}[]", name)]
        if kind == "object":
            if "properties" in sub:
                return self.model(sub, sub.get("title") or name, path)
            extra = sub.get("additionalProperties")
            if not isinstance(extra, dict):
                return dict[str, Any]
            return dict[str, self.annotation(cast("dict[str, Any]", extra), path, name)]
        if kind is None:
            return Any
        raise self.fail(path, f"unknown type {kind!r}")

    def ref(self, ref: str, path: str) -> type[BaseModel]:
        key = ref.rsplit("/", 1)[-1]
        if key in self.built:
            return self.built[key]
        if key not in self.defs:
            raise self.fail(path, f"unresolved reference {ref!r}")
        if key in self.building:
            raise self.fail(path, f"recursive reference {ref!r} is not supported")
        self.building.add(key)
        self.built[key] = self.model(self.defs[key], key, f"$defs.{key}")
        self.building.discard(key)
        return self.built[key]


def _union(options: list[Any]) -> Any:
    return options[0] if len(options) == 1 else Union[tuple(options)]  # noqa: UP007 - runtime type


def _class_name(title: str) -> str:
    words = "".join(ch if ch.isalnum() else " " for ch in title).split()
    name = "".join(word[:1].upper() + word[1:] for word in words)
    return name if name.isidentifier() else f"Args{name}"
