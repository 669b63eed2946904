"""The JSON Schema of ``crew.yaml``, generated from the models (``crew schema``).

Editors use it to complete keys and flag mistakes as you type (for VS Code's YAML
extension: ``# yaml-language-server: $schema=crew.schema.json`` at the top of the file).
Each key's schema follows from how ``crew.config.fields`` says it is written in YAML.
"""

from __future__ import annotations

import contextlib
import functools
import json
import operator
import typing
from typing import Any

from crew.common.keywords import CREWAI_KEYS
from crew.config.fields import FieldSpec, Section, callable_annotation, fields_of

_IMPORT = {"type": "string", "pattern": r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$"}
_MODEL = {
    "anyOf": [
        {"type": "string", "description": "a litellm model name, or 'test' for the offline model"},
        {
            "type": "object",
            "properties": {"model": {"type": "string"}},
            "required": ["model"],
            "description": "LLM settings: model, temperature, max_tokens, api_base ...",
        },
    ]
}
_NAMES = {"type": "array", "items": {"type": "string"}}
_STRINGS = {"type": "object", "additionalProperties": {"type": "string"}}
_SERVER = {
    "type": "object",
    "properties": {
        "command": {"type": "string"},
        "args": _NAMES,
        "env": _STRINGS,
        "cwd": {"type": "string"},
        "url": {"type": "string"},
        "headers": _STRINGS,
        "transport": {"enum": ["http", "sse"]},
        "tool_filter": _NAMES,
        "prefix": {"type": "string"},
        "timeout": {"type": "number", "exclusiveMinimum": 0},
        "call_timeout": {"type": "number", "exclusiveMinimum": 0},
        "approve_destructive": {"type": "boolean"},
    },
    "additionalProperties": False,
    "description": "a stdio server (command, args, env, cwd) or an HTTP one (url, headers, transport)",
}


_KNOWLEDGE = {
    "type": "array",
    "items": {
        "anyOf": [
            {"type": "string", "description": "a file in knowledge/ (pdf, csv, json by extension; else text)"},
            {
                "type": "object",
                "properties": {
                    "file": {"type": "string"},
                    "files": _NAMES,
                    "content": {"type": "string"},
                    "type": {"enum": ["text", "pdf", "csv", "json"]},
                    "chunk_size": {"type": "integer", "minimum": 1},
                    "chunk_overlap": {"type": "integer", "minimum": 0},
                    "metadata": {"type": "object"},
                },
                "additionalProperties": False,
            },
        ]
    },
}


def crew_json_schema() -> dict[str, Any]:
    """A draft 2020-12 JSON Schema for crew.yaml (agents.yaml and tasks.yaml are its sections)."""
    defs: dict[str, Any] = {}
    sections = {
        "agents": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Agent"}},
        "tasks": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Task"}},
        "tools": {"type": "object", "additionalProperties": {"anyOf": [_IMPORT, {"$ref": "#/$defs/Tool"}]}},
        "inputs": {"type": "object", "description": "default values for {placeholders}"},
        "mcp_servers": {"type": "object", "additionalProperties": _SERVER},
    }
    for title, section in (("Agent", "agent"), ("Task", "task"), ("Tool", "tool")):
        defs[title] = _object(section, defs, {})  # type: ignore[arg-type]
    crew = _object("crew", defs, sections)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "crew.yaml", **crew, "$defs": defs}


def _object(section: Section, defs: dict[str, Any], sections: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for key, spec in fields_of(section).items():
        schema = dict(sections[key]) if spec.kind == "section" else _field(spec, defs)
        if spec.description and "description" not in schema:
            schema["description"] = spec.description
        properties[key] = schema
        if spec.required and key == spec.name and section != "crew":
            required.append(key)
    for key in sorted(CREWAI_KEYS[section]):  # the loader warns and ignores them; so may editors
        properties.setdefault(key, {"deprecated": True, "description": "CrewAI key, not supported here: ignored"})
    out: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        out["required"] = required
    return out


def _field(spec: FieldSpec, defs: dict[str, Any]) -> dict[str, Any]:
    if spec.kind == "model":
        schema: dict[str, Any] = json.loads(json.dumps(_MODEL))
    elif spec.kind == "import":
        schema = dict(_IMPORT, description="import path 'module:attr', relative to the crew folder")
    elif spec.kind == "value_or_import":
        values = _value_schema(spec, defs, without_callables=True)
        schema = {"anyOf": [values, _IMPORT], "description": "a value, or 'module:attr' of a function"}
    elif spec.kind == "agent":
        schema = {"type": "string", "description": "the name of an agent under `agents:`"}
    elif spec.kind == "tasks":
        schema = dict(_NAMES, description="names of tasks whose outputs this task reads")
    elif spec.kind == "tools":
        schema = dict(_NAMES, description="names of tools under `tools:`")
    elif spec.kind == "servers":
        schema = dict(_NAMES, description="names of MCP servers under `mcp_servers:`")
    elif spec.kind == "knowledge":
        schema = json.loads(json.dumps(_KNOWLEDGE))
    else:
        schema = _value_schema(spec, defs)
    if spec.default is not None and spec.kind == "value":
        with contextlib.suppress(TypeError, ValueError):
            schema["default"] = json.loads(json.dumps(spec.default))
    return schema


def _value_schema(spec: FieldSpec, defs: dict[str, Any], *, without_callables: bool = False) -> dict[str, Any]:
    """Pydantic's own schema for the annotation (its non-callable alternatives, when asked);
    ``{}`` (anything) when it has none."""
    from pydantic import TypeAdapter

    annotation = spec.annotation
    if without_callables:
        options = [a for a in typing.get_args(annotation) if not callable_annotation(a)]
        annotation = functools.reduce(operator.or_, options)
    try:
        schema = TypeAdapter(annotation).json_schema(ref_template="#/$defs/{model}")
    except Exception:  # noqa: BLE001 - arbitrary Python types have no JSON Schema: accept anything
        return {}
    defs.update(schema.pop("$defs", {}))
    schema.pop("title", None)
    return schema
