"""A crew folder as something a client can call: its name, description, input and output schemas.

Every way of serving (MCP, the HTTP API, A2A) shows a crew through one ``ServedCrew``, so a
tool, an endpoint and a skill of the same folder agree: the name is the crew's (its folder's
when it kept the default), the description is the crew's ``description`` or a summary of its
tasks, the inputs are its ``{placeholders}`` with the defaults of ``inputs:`` (a default's
JSON type types the input; an input without one is a string), and the output schema is the
last task's ``output_pydantic``/``output_json`` model, when it has one.

A call's inputs are checked here (unknown names, missing ones, types, sizes) before any
kickoff, so every door refuses bad input with the same clear message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crew.errors import ServeInputError

__all__ = ["MAX_INPUT_BYTES", "ServedCrew", "load_served", "serve_crew", "unique_names"]

MAX_INPUT_BYTES = 256 * 1024
"""The JSON size of one call's inputs past which it is refused (a crew's inputs are a prompt's parts)."""

_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),  # before int: True is an int
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


@dataclass
class ServedCrew:
    """One served crew folder (see the module docstring)."""

    name: str
    description: str
    crew: Any
    """The loaded crew; each call runs a copy of it."""
    defaults: dict[str, Any]
    """The inputs' defaults (crew.yaml's ``inputs:``)."""
    input_schema: dict[str, Any]
    folder: Path | None = None
    """The crew folder it was loaded from (None: a crew built in Python)."""
    output_schema: dict[str, Any] | None = None
    llm: str | None = None
    live_tools: bool = False
    store: Any = None
    """The ``RunStore`` its runs are recorded in (None: not recorded)."""
    warnings: list[str] = field(default_factory=list)
    """What the loader noticed (said once when the server starts)."""
    settings: dict[str, Any] = field(default_factory=dict)
    """Kept with each run's record, so ``crew resume`` continues it as this server ran it."""

    def check_inputs(self, given: Any) -> dict[str, Any]:
        """The call's inputs, over the defaults, checked against the input schema; else ``ServeInputError``."""
        if given is None:
            given = {}
        if not isinstance(given, Mapping):
            raise ServeInputError(
                f"crew '{self.name}': the inputs must be an object of input names to values, "
                f"got {type(given).__name__}",
                crew=self.name,
            )
        _check_size(self.name, given)
        properties: dict[str, Any] = self.input_schema.get("properties", {})
        problems: dict[str, str] = {}
        for key, value in given.items():
            spec = properties.get(key)
            if spec is None:
                known = ", ".join(sorted(properties)) or "none"
                problems[str(key)] = f"not an input of this crew (its inputs: {known})"
            elif not _fits(value, spec.get("type")):
                problems[str(key)] = f"expected {_a(spec.get('type'))}, got {_json_type(value)}"
        for key in self.input_schema.get("required", []):
            if key not in given:
                problems[key] = "missing (it has no default)"
        if problems:
            listed = "; ".join(f"input '{key}': {why}" for key, why in problems.items())
            raise ServeInputError(f"crew '{self.name}': {listed}", crew=self.name, problems=problems)
        return {**self.defaults, **dict(given)}

    def fresh_crew(self, inputs: Mapping[str, Any]) -> Any:
        """A crew for one call: a copy of the loaded one (so calls never share a test model's
        inputs or stand-ins), readied for the test model as ``crew kickoff`` readies it.

        The copies share one thing: the crew's ``max_rpm`` limiter, so the requests per minute
        count across all the server's kickoffs of the crew, as they do across one crew's kickoffs."""
        from crew.config.dry_run import offline

        try:
            crew = self.crew.model_copy(deep=True)
        except Exception:  # a tool holding what cannot be copied (a lock, a client): load it again
            if self.folder is None:
                raise
            crew = _load(self.folder, self.llm).crew
        offline(crew, inputs, live_tools=self.live_tools)
        if self.crew.max_rpm is not None and crew.max_rpm == self.crew.max_rpm:
            crew._limiter = self.crew.limiter  # one max_rpm budget for every kickoff of the served crew
        return crew

    def final_output(self, output: Any) -> Any:
        """The structured output of a finished run (a dict), or None when the crew's is text."""
        if self.output_schema is None:
            return None
        if output.pydantic is not None and hasattr(output.pydantic, "model_dump"):
            return output.pydantic.model_dump(mode="json")
        return output.json_dict


def load_served(path: str | Path, *, llm: str | None = None, live_tools: bool = False) -> ServedCrew:
    """Load a crew folder to serve; ``ConfigError`` (file, line, key) when it does not load."""
    project = _load(Path(path), llm)
    crew = project.crew
    folder = Path(project.folder).resolve()
    name = crew.name if crew.name and crew.name != "crew" else folder.name
    names = [p.name for p in project.placeholders]
    served = ServedCrew(
        name=_tool_name(name),
        description=describe(crew),
        crew=crew,
        defaults=dict(project.inputs),
        input_schema=input_schema(names, project.inputs),
        output_schema=output_schema(crew),
        folder=folder,
        llm=llm,
        live_tools=live_tools,
        settings={"llm": llm, "out": None, "live_tools": live_tools},
    )
    served.warnings = [str(w) for w in project.warnings]
    return served


def serve_crew(
    crew: Any, *, name: str | None = None, inputs: Mapping[str, Any] | None = None, store: Any = None
) -> ServedCrew:
    """A crew built in Python, served: its placeholders are its inputs, ``inputs`` their defaults.

    ``store``: a ``RunStore`` its runs are recorded in (default: the crew's own ``store``, if any).
    """
    from crew.tasks.interpolate import placeholders

    texts = [t for a in crew.all_agents() for t in (a.role, a.goal, a.backstory)]
    texts += [t for task in crew.tasks for t in (task.description, task.expected_output, task.output_file or "")]
    names = [found for text in texts for found in placeholders(str(text or ""))]
    defaults = dict(inputs or {})
    return ServedCrew(
        name=_tool_name(name or crew.name),
        description=describe(crew),
        crew=crew,
        defaults=defaults,
        input_schema=input_schema(names, defaults),
        output_schema=output_schema(crew),
        live_tools=True,  # a crew built in Python runs as its author built it
        store=store if store is not None else crew.run_store(),
    )


def _load(folder: Path, llm: str | None) -> Any:
    from crew.config import load_project
    from crew.store.scrub import scrubber_for

    project = load_project(folder, llm=llm, require_model=True)
    scrubber_for(project.crew)  # the crew's keys are masked in everything from here on
    return project


def describe(crew: Any) -> str:
    """The crew's ``description``, else what its tasks do (their first sentences), for a client to choose by."""
    if getattr(crew, "description", ""):
        return str(crew.description).strip()
    from crew.tasks.graph import task_names

    parts = []
    for name, task in zip(task_names(crew.tasks), crew.tasks, strict=True):
        text = " ".join(str(task.description).split())
        first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
        parts.append(f"{name}: {first[:160]}")
    return f"Runs the crew '{crew.name}' ({len(parts)} tasks). " + " ".join(parts)


def input_schema(placeholders: list[str], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON schema of the crew's inputs: every placeholder, and every default of ``inputs:``."""
    names = list(dict.fromkeys([*placeholders, *defaults]))
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name in names:
        spec: dict[str, Any] = {"type": "string"}
        if name in defaults:
            default = defaults[name]
            spec = {"type": _json_type(default), "default": default}
        else:
            required.append(name)
        spec["description"] = f"fills {{{name}}} in the crew's tasks and agents"
        properties[name] = spec
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def output_schema(crew: Any) -> dict[str, Any] | None:
    """The last task's output model as a JSON schema (refs inlined at the top), or None for text."""
    last = crew.tasks[-1] if crew.tasks else None
    model = None if last is None else (last.output_pydantic or last.output_json)
    if model is None:
        return None
    schema = model.model_json_schema()
    return schema if schema.get("type") == "object" else None


def unique_names(served: list[ServedCrew]) -> None:
    """Two folders with one crew name: the second is ``name_2`` (a client names tools uniquely)."""
    seen: dict[str, int] = {}
    for one in served:
        count = seen.get(one.name, 0) + 1
        seen[one.name] = count
        if count > 1:
            one.name = f"{one.name}_{count}"


def _tool_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_.-")
    return (cleaned or "crew")[:64]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    for kind, word in _JSON_TYPES:
        if isinstance(value, kind):
            return word
    return "string"


def _fits(value: Any, expected: Any) -> bool:
    if expected is None or value is None:
        return True
    actual = _json_type(value)
    return actual == expected or (expected == "number" and actual == "integer")


def _a(kind: Any) -> str:
    word = str(kind or "a value")
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def _check_size(crew: str, given: Mapping[str, Any]) -> None:
    try:
        size = len(json.dumps(given, ensure_ascii=False, default=str).encode())
    except (ValueError, RecursionError):
        raise ServeInputError(f"crew '{crew}': the inputs are not plain JSON values", crew=crew) from None
    if size > MAX_INPUT_BYTES:
        raise ServeInputError(
            f"crew '{crew}': the inputs are {size:,} bytes of JSON, over the limit of {MAX_INPUT_BYTES:,}", crew=crew
        )
