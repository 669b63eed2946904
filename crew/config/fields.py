"""Which YAML keys exist, read from the pydantic models themselves.

A crew file may set every field of ``Crew``, ``Agent``, ``Task`` and ``BaseTool``; this
module decides how each field is written in YAML, so the loader, ``crew schema`` and
docs/yaml.md all follow the models and cannot drift from them:

- ``value``  written as is and validated by the model (strings, numbers, lists ...);
- ``model``  a model name (``llm``, ``*_llm``): a string, or a mapping of ``LLM`` settings;
- ``import`` a callable or a class (callbacks, guardrails, output models): ``"module:attr"``;
- ``agent`` / ``tasks`` / ``tools`` / ``servers``: names of things declared elsewhere in the crew.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from crew.common.keywords import Section

Kind = Literal[
    "value", "value_or_import", "model", "import", "agent", "tasks", "tools", "servers", "section", "knowledge"
]

# Keys whose YAML value names something declared in the same crew.
_REFS: dict[str, dict[str, Kind]] = {
    "crew": {"manager_agent": "agent", "knowledge_sources": "knowledge"},
    "agent": {"tools": "tools", "mcp": "servers", "knowledge_sources": "knowledge"},
    "task": {"agent": "agent", "context": "tasks", "tools": "tools"},
    "tool": {},
}
# Fields that are runtime state or are given by the surrounding YAML structure.
_HIDDEN: dict[str, frozenset[str]] = {
    # the CLI records every run in .crew/runs.db; knowledge paths resolve in the crew folder's knowledge/;
    # context providers are Python objects
    "crew": frozenset({"agents", "tasks", "store", "knowledge_folder", "context_providers"}),
    "agent": frozenset(),
    "task": frozenset(),
    "tool": frozenset({"name", "current_usage_count", "func", "coroutine"}),
}
_KNOWLEDGE = "files in knowledge/ (kind by extension) or {content: ...} strings every agent (or this agent) reads"
# Keys that exist only in YAML (no model field behind them).
_YAML_ONLY: dict[str, dict[str, tuple[Kind, str]]] = {
    "crew": {
        "llm": ("model", "default model of every agent (and of the manager) that sets none"),
        "agents": ("section", "agents by name"),
        "tasks": ("section", "tasks by name, in the order they are declared"),
        "tools": ("section", "tool name -> 'module:attr' import path (or a mapping with `import:` and settings)"),
        "inputs": ("section", "default values for {placeholders}; kickoff -i/--inputs-file override them"),
        "mcp_servers": ("section", "MCP servers by name: {command, args, env, cwd} or {url, headers, transport}"),
        "knowledge": ("knowledge", _KNOWLEDGE),
    },
    "agent": {"knowledge": ("knowledge", _KNOWLEDGE)},
    "task": {},
    "tool": {
        "import": ("import", "'module:attr' of a @tool object, BaseTool subclass or instance, or a documented function")
    },
}


@dataclass(frozen=True)
class FieldSpec:
    """How one YAML key is written and what it means."""

    name: str
    kind: Kind
    annotation: Any
    required: bool
    default: Any
    description: str


def model_class(section: Section) -> type:
    """The pydantic model a section is loaded into (imported on first use)."""
    if section == "crew":
        from crew.crew import Crew

        return Crew
    if section == "agent":
        from crew.agent.agent import Agent

        return Agent
    if section == "task":
        from crew.tasks.task import Task

        return Task
    from crew.tools.base import BaseTool

    return BaseTool


@cache
def fields_of(section: Section) -> dict[str, FieldSpec]:
    """Every key a section accepts, model fields first (their declared order), keyed by YAML name."""
    out: dict[str, FieldSpec] = {}
    for name, info in model_class(section).model_fields.items():
        if name in _HIDDEN[section]:
            continue
        spec = FieldSpec(
            name=name,
            kind=_kind(section, name, info.annotation),
            annotation=info.annotation,
            required=info.is_required() and section != "tool",  # a tool's object supplies its fields
            default=None if info.is_required() else info.get_default(call_default_factory=True),
            description=info.description or "",
        )
        out[name] = spec
        if isinstance(info.alias, str) and info.alias != name:
            out[info.alias] = spec
    for name, (kind, description) in _YAML_ONLY[section].items():
        out.setdefault(name, FieldSpec(name, kind, Any, section == "tool", None, description))
    return out


def _kind(section: Section, name: str, annotation: Any) -> Kind:
    if name in _REFS[section]:
        return _REFS[section][name]
    if name == "llm" or name.endswith("_llm"):
        return "model"
    if _only_callables(annotation):
        return "import"
    return "value_or_import" if _callable_or_value(annotation) else "value"


def _callable_or_value(annotation: Any) -> bool:
    """A callable or a value that is never text (``bool | Callable``): a string names the callable."""
    options = [a for a in _alternatives(annotation) if a is not type(None)]
    return any(callable_annotation(a) for a in options) and str not in options


def _only_callables(annotation: Any) -> bool:
    """True when every non-None alternative is a callable or a class: YAML can only name it."""
    options = [a for a in _alternatives(annotation) if a is not type(None)]
    return bool(options) and all(callable_annotation(a) for a in options)


def _alternatives(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def callable_annotation(annotation: Any) -> bool:
    """Whether ``annotation`` is a callable or a class (YAML names such a value by its import path)."""
    origin = typing.get_origin(annotation) or annotation
    return origin in (collections.abc.Callable, typing.Callable, type)
