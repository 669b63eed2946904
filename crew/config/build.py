"""From YAML trees to ``Agent``, ``Task`` and ``Crew`` objects, with every problem located.

The builder checks what the models cannot know (names referring to each other, import
paths, which key sits on which line), then hands each entry to the model itself, so a
YAML crew is exactly the crew the same arguments would give in Python. Problems are
collected, not raised one by one: a user fixes a file in one pass.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from typing import Any

from crew.common.keywords import CREWAI_KEYS, did_you_mean
from crew.config.entries import Entry, Placeholder, Resolved, key_path, not_imported, plain, type_name
from crew.config.fields import FieldSpec, Section, fields_of, model_class
from crew.config.imports import ImportProblem, as_tool, check_import_path, import_object, risky
from crew.config.knowledge import knowledge_list
from crew.config.loader import YamlList, YamlMap
from crew.config.problems import Problems
from crew.models.doors import model_name_problem

# Which texts take {placeholders}: the fields the models fill at kickoff.
TEMPLATED: dict[Section, tuple[str, ...]] = {
    "agent": ("role", "goal", "backstory"),
    "task": ("description", "expected_output", "output_file"),
}
_SECRET = re.compile(r"key|token|secret|password", re.IGNORECASE)


class Builder:
    """Builds one crew; every check appends to ``problems`` instead of raising."""

    def __init__(
        self,
        folder: Path,
        problems: Problems,
        *,
        llm: str | None,
        out_dir: Path | None,
        require_model: bool,
        import_code: bool = True,
    ) -> None:
        self.folder = folder
        self.import_code = import_code  # False: `validate --no-import` runs none of the folder's code
        self.problems = problems
        self.llm_override = llm
        self.out_dir = out_dir
        self.require_model = require_model
        self.crew_llm: Any = None
        self.env_model: str | None = None  # a CrewAI project's MODEL (its .env, or the environment)
        self.tools: dict[str, Any] = {}
        self.tool_names: set[str] = set()
        self.servers: dict[str, Any] = {}
        self.server_names: set[str] = set()
        self.placeholders: list[Placeholder] = []
        self.unmodelled: list[Entry] = []

    # -- generic pieces ----------------------------------------------------------------

    def error(self, entry: Entry, key: Any, message: str, *, line: int | None = None) -> None:
        path = key_path(entry.path, key)
        self.problems.add(entry.file_of(key), line or entry.line_of(key), path, message)

    def check_keys(self, entry: Entry, section: Section) -> dict[str, FieldSpec] | None:
        """Report unknown keys (with a suggestion) and CrewAI-only keys (a warning).

        Returns the accepted fields, or None when the entry is not a mapping at all.
        """
        if not isinstance(entry.data, YamlMap):
            what = {"crew": "crew settings", "agent": "agent", "task": "task", "tool": "tool"}[section]
            self.problems.add(
                entry.file,
                entry.line,
                entry.path,
                f"expected a mapping of {what} keys, got {type_name(entry.data)}",
            )
            return None
        fields = fields_of(section)
        accepted: dict[str, FieldSpec] = {}
        for key in entry.data:
            if isinstance(key, str) and key in fields:
                accepted[key] = fields[key]
            elif isinstance(key, str) and key in CREWAI_KEYS[section]:
                self.problems.add(
                    entry.file_of(key),
                    entry.line_of(key),
                    key_path(entry.path, key),
                    f"CrewAI key '{key}' is not supported here and is ignored",
                    "warning",
                )
            else:
                self.error(entry, key, f"unknown key '{key}'{did_you_mean(key, _visible(fields))}")
        return accepted

    def value_of(self, entry: Entry, key: str, spec: FieldSpec, value: Any) -> tuple[bool, Any]:
        """Resolve a ``value``, ``model`` or ``import`` key (a ``value_or_import`` one imports
        only a string); (False, None) after an error."""
        if isinstance(value, Resolved):
            return True, value.obj
        if spec.kind == "import" or (spec.kind == "value_or_import" and isinstance(value, str)):
            if value is None:
                return True, None
            try:
                if not self.import_code:
                    check_import_path(value, self.folder)
                    return True, None  # left unset: checking it would mean running it
                return True, import_object(value, self.folder)
            except ImportProblem as exc:
                self.error(entry, key, str(exc))
                return False, None
        if spec.kind == "model":
            return self.model_value(entry, key, value)
        if key == "memory" and isinstance(value, dict) and isinstance(value.get("path"), str):
            value = {**value, "path": str(self.folder / value["path"])}  # a crew's memory file is in its folder
        return True, plain(value)

    def field_ok(self, entry: Entry, section: Section, key: str, value: Any) -> bool:
        """Check one value against its model field alone, reporting what is wrong.

        The crew itself is only built once its agents and tasks are sound; checking its
        settings one by one first still reports them with every other error of the file.
        """
        from pydantic import ValidationError

        try:
            _field_adapter(section, key).validate_python(value)
        except ValidationError as exc:
            for err in exc.errors():
                self.validation_error(entry, {**err, "loc": (key, *err.get("loc", ()))})
            return False
        return True

    def model_value(self, entry: Entry, key: str, value: Any) -> tuple[bool, Any]:
        """A model name stays a string (the agent resolves it lazily); a mapping becomes an LLM."""
        if value is None or isinstance(value, str):
            problem = model_name_problem(value) if value else None
            if problem is not None:
                self.error(entry, key, f"{problem} (e.g. 'openai/gpt-4o-mini', or 'test' offline)")
                return False, None
            return True, value or None
        if isinstance(value, YamlMap):
            from pydantic import ValidationError

            from crew.models import LLM

            try:
                llm = LLM(**plain(value))
                # the offline model, as `llm: test` is (its settings were checked, and it needs none)
                return True, "test" if llm.model.strip().lower() == "test" else llm
            except ValidationError as exc:  # one line per wrong setting, at its own line
                settings = Entry(key, value, entry.file_of(key), entry.line_of(key), key_path(entry.path, key))
                for err in exc.errors():
                    self.validation_error(settings, err)
            except Exception as exc:  # noqa: BLE001 - any settings error is the user's to fix
                self.error(entry, key, f"invalid LLM settings: {_exc_text(exc)}")
            return False, None
        self.error(entry, key, f"expected a model name such as 'openai/gpt-4o-mini', got {type_name(value)}")
        return False, None

    def crew_model(self, value: Any) -> Any:
        """The crew's default model: --llm, else crew.yaml's ``llm:``, else $CREW_LLM, else (a CrewAI
        project's) $MODEL."""
        return self.llm_override or value or os.environ.get("CREW_LLM") or self.env_model or None

    def construct(
        self,
        entry: Entry,
        cls: type,
        kwargs: dict[str, Any],
        *,
        passthrough: tuple[type[Exception], ...] = (),
        context: dict[str, Any] | None = None,
    ) -> Any:
        """``cls(**kwargs)`` with validation errors mapped back to lines; None after an error.

        Exceptions in ``passthrough`` propagate, for callers that can locate them better;
        ``context`` is pydantic's validation context (``{"prewarm": False}`` for a Crew).
        """
        from pydantic import ValidationError

        try:
            return cls.model_validate(kwargs, context=context)
        except passthrough:
            raise
        except ValidationError as exc:
            for err in exc.errors():
                self.validation_error(entry, err)
        except Exception as exc:  # noqa: BLE001 - model rules raise plain errors; report them all alike
            self.problems.add(entry.file, entry.line, entry.path, _exc_text(exc))
        return None

    def validation_error(self, entry: Entry, err: Any) -> None:
        loc = list(err.get("loc", ()))
        file = entry.file_of(loc[0]) if loc else entry.file
        node, line = entry.data, entry.line
        for part in loc:
            if (isinstance(node, YamlMap) and part in node) or (
                isinstance(node, YamlList) and isinstance(part, int) and part < len(node)
            ):
                line, node = node.line_of(part), node[part]
            else:
                break
        if err.get("type") == "missing":
            message = "required key is missing"
        else:
            message = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
            value = err.get("input")
            secret = any(_SECRET.search(str(part)) for part in loc)
            if isinstance(value, (int, float, str)) and not secret and len(repr(value)) <= 60:
                message += f" (got {value!r})"
        self.problems.add(file, line, key_path(entry.path, *loc), message)

    def collect_placeholders(self, entry: Entry, section: Section) -> None:
        from crew.tasks.interpolate import placeholders

        for key in TEMPLATED.get(section, ()):
            text = entry.data.get(key)
            if isinstance(text, str):
                for name in placeholders(text):
                    self.placeholders.append(
                        Placeholder(name, entry.file_of(key), entry.line_of(key), key_path(entry.path, key))
                    )

    # -- sections ----------------------------------------------------------------------

    def build_tools(self, entries: list[Entry]) -> None:
        self.tool_names |= {e.name for e in entries}
        for entry in entries:
            read = self._tool_spec(entry)
            if read is None:
                continue
            spec_value, settings = read
            if risky(spec_value):
                self.problems.add(
                    entry.file,
                    entry.line_of("import") if isinstance(entry.data, YamlMap) else entry.line,
                    entry.path,
                    f"tool '{entry.name}' is '{spec_value}', from the standard library's process, file or network "
                    "modules: the model will call it with arguments of its own choosing",
                    "warning",
                )
            built = self._load_tool(entry, spec_value, settings)
            if built is not None:
                self.tools[entry.name] = built

    def _tool_spec(self, entry: Entry) -> tuple[Any, dict[str, Any]] | None:
        """A tool's import path and its settings (``name: module:attr`` has none); None after an error."""
        if not isinstance(entry.data, YamlMap):
            return entry.data, {}
        fields = self.check_keys(entry, "tool") or {}
        if "import" not in entry.data:
            self.error(entry, "", "a tool given as a mapping needs `import: module:attr`")
            return None
        settings: dict[str, Any] = {}
        ok = True
        for key, spec in fields.items():
            if key != "import":
                good, settings[key] = self.value_of(entry, key, spec, entry.data[key])
                ok = ok and good
        return (entry.data.get("import"), settings) if ok else None

    def _load_tool(self, entry: Entry, spec_value: Any, settings: dict[str, Any]) -> Any:
        """The tool an import path names (a stand-in under ``--no-import``); None after an error."""
        try:
            if self.import_code:
                obj = import_object(spec_value, self.folder)
            else:
                check_import_path(spec_value, self.folder)
                obj = not_imported(entry.name)
            return self._as_tool(entry, obj, settings)
        except ImportProblem as exc:
            self.error(entry, "import" if settings or isinstance(entry.data, YamlMap) else "", str(exc))
            return None

    def _as_tool(self, entry: Entry, obj: Any, settings: dict[str, Any]) -> Any:
        from pydantic import ValidationError

        try:
            return as_tool(obj, entry.name, settings)
        except ImportProblem:
            raise
        except ValidationError as exc:
            for err in exc.errors():
                self.validation_error(entry, err)
        except Exception as exc:  # noqa: BLE001 - ToolDefinitionError and friends, reported with the line
            text = _exc_text(exc)
            self.error(entry, next((key for key in settings if key in text), ""), text)
        return None

    def tool_list(self, entry: Entry, key: str, value: Any) -> tuple[bool, list[Any] | None]:
        if value is None:
            return True, None
        if not isinstance(value, list):
            self.error(entry, key, f"expected a list of tool names, got {type_name(value)}")
            return False, None
        out, ok = [], True
        for i, name in enumerate(value):
            line = value.line_of(i) if isinstance(value, YamlList) else None
            if not isinstance(name, str):
                self.error(entry, key, f"expected a tool name, got {type_name(name)}", line=line)
                ok = False
            elif name not in self.tool_names:
                hint = did_you_mean(name, self.tool_names) or (
                    f" (declared tools: {', '.join(sorted(self.tool_names))})"
                    if self.tool_names
                    else f" (declare it under `tools:` in crew.yaml, as `{name}: module:attr`)"
                )
                self.problems.add(
                    entry.file_of(key),
                    line or entry.line_of(key),
                    key_path(entry.path, key, i),
                    f"unknown tool '{name}'{hint}",
                )
                ok = False
            elif name in self.tools:
                out.append(self.tools[name])
            else:
                ok = False  # the tool itself failed to load; already reported
        return ok, out

    def server_list(self, entry: Entry, key: str, value: Any) -> tuple[bool, list[Any] | None]:
        """An agent's ``mcp: [name, ...]``: the servers by name, unknown ones reported with a suggestion."""
        if value is None:
            return True, None
        if not isinstance(value, list):
            self.error(entry, key, "expected a list of MCP server names (declared under `mcp_servers:`)")
            return False, None
        out, ok = [], True
        names = self.server_names
        for i, name in enumerate(value):
            line = value.line_of(i) if isinstance(value, YamlList) else None
            if not isinstance(name, str) or name not in names:
                hint = did_you_mean(str(name), names) or (
                    f" (declared servers: {', '.join(sorted(names))})"
                    if names
                    else " (declare it under `mcp_servers:`)"
                )
                self.problems.add(
                    entry.file,
                    line or entry.line_of(key),
                    f"{entry.path}.{key}[{i}]",
                    f"unknown MCP server {name!r}{hint}",
                )
                ok = False
            elif name in self.servers:
                out.append(self.servers[name])
            else:
                ok = False  # its own entry was wrong; already reported
        return ok, out

    def build_agents(self, entries: list[Entry]) -> dict[str, Any]:
        from crew.agent.agent import Agent

        agents: dict[str, Any] = {}
        for entry in entries:
            fields = self.check_keys(entry, "agent")
            if fields is None:
                continue
            self.collect_placeholders(entry, "agent")
            kwargs, ok = self.kwargs_for(entry, "agent", fields)
            if self.llm_override:  # --llm replaces every model the agent would talk to
                kwargs["llm"] = self.llm_override
                kwargs.update({k: self.llm_override for k, spec in fields.items() if spec.kind == "model"})
            if kwargs.get("llm") is None and self.crew_llm is None:
                self.unmodelled.append(entry)
            if "name" in fields_of("agent") and "name" not in kwargs:
                kwargs["name"] = entry.name
            agent = self.construct(entry, Agent, kwargs)  # even after an error: it reports the rest
            if agent is not None and ok:
                agents[entry.name] = agent
        return agents

    def kwargs_for(self, entry: Entry, section: Section, fields: dict[str, FieldSpec]) -> tuple[dict[str, Any], bool]:
        """Resolve the plain, model, import and tool keys of an entry (not agent/task refs).

        Keys that fail are left out, so the model can still report on all the others.
        """
        kwargs: dict[str, Any] = {}
        ok = True
        for key, spec in fields.items():
            value = entry.data[key]
            if spec.kind == "import" and key in CREWAI_KEYS[section] and _prose(value):
                # CrewAI also takes text here (e.g. a guardrail the model checks); we take code only.
                self.problems.add(
                    entry.file_of(key),
                    entry.line_of(key),
                    key_path(entry.path, key),
                    f"CrewAI's text form of '{key}' is not supported here and is ignored "
                    "(give the import path 'module:attr' of a function)",
                    "warning",
                )
                continue
            if spec.kind == "tools":
                good, resolved = self.tool_list(entry, key, value)
            elif spec.kind == "servers":
                good, resolved = self.server_list(entry, key, value)
            elif spec.kind == "knowledge":
                good, resolved = knowledge_list(self, entry, key, value)
                if good:
                    kwargs["knowledge_sources"] = [*kwargs.get("knowledge_sources", []), *(resolved or [])]
                ok = ok and good
                continue
            elif spec.kind in ("agent", "tasks", "section"):
                continue
            else:
                good, resolved = self.value_of(entry, key, spec, value)
            if good:
                kwargs[key] = resolved
            ok = ok and good
        return kwargs, ok


@cache
def _field_adapter(section: Section, key: str) -> Any:
    """A validator for one model field: its type and its constraints (``ge=1`` ...)."""
    from typing import Annotated

    from pydantic import ConfigDict, TypeAdapter

    info = model_class(section).model_fields[key]
    # a type built at run time from the field (pydantic's documented way); no static type to check
    field_type: Any = Annotated[info.annotation, info]  # pyright: ignore[reportInvalidTypeForm]
    return TypeAdapter(field_type, config=ConfigDict(arbitrary_types_allowed=True))


def _prose(value: Any) -> bool:
    """Text that is plainly not an import path: words separated by spaces."""
    return isinstance(value, str) and ":" not in value.strip().split(" ", 1)[0] and " " in value.strip()


def _visible(fields: dict[str, FieldSpec]) -> list[str]:
    return [k for k in fields if not k.startswith("_")]


def _exc_text(exc: BaseException) -> str:
    from crew.errors import ConfigError

    if isinstance(exc, ConfigError) and len(exc.errors) > 1:
        return "; ".join(exc.errors)
    return str(exc) or type(exc).__name__
