"""Task: one unit of work for an agent, and the rules that decide when its output counts.

A ``Task`` is a declaration. It is never mutated by a run: the crew makes a filled-in
copy per kickoff (``interpolate``), so one ``Task`` object can serve many kickoffs and
many crews at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from crew.common.keywords import known_keys
from crew.tasks.interpolate import fill, fill_path
from crew.tools.base import BaseTool
from crew.tools.decorator import wrap_functions
from crew.tools.execution.registry import one_tool_per_name

Guardrail = Callable[[Any], Any]
"""``guardrail(output: TaskOutput) -> (bool, Any)`` (may be async): CrewAI's contract."""

Condition = Callable[[list[Any]], Any]
"""``condition(outputs: list[TaskOutput]) -> bool`` (may be async), given the outputs the task sees."""


class Task(BaseModel):
    """What to do, what to hand back, who does it and what it needs first.

    ``name`` identifies the task inside a crew (context references, outputs, events).
    Left empty, the crew names it after its position: ``task_1``, ``task_2`` ...
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, validate_assignment=True)

    description: str
    expected_output: str = ""
    name: str | None = None
    agent: Any = Field(default=None, repr=False, description="the Agent that performs the task")
    context: list[Task | str] | None = Field(
        default=None,
        repr=False,
        description="tasks (objects or names) whose outputs this task needs; None = the process default",
    )
    tools: list[BaseTool] | None = Field(
        default=None, repr=False, description="replaces the agent's tools for this task"
    )
    output_pydantic: type[BaseModel] | None = None
    output_json: type[BaseModel] | None = None
    output_file: str | None = None
    guardrail: Guardrail | None = None
    guardrail_max_retries: int = Field(default=3, ge=0)
    callback: Callable[[Any], Any] | None = None
    async_execution: bool = False
    human_input: bool = False
    condition: Condition | None = None
    max_retries: int = Field(default=0, ge=0)
    timeout: float | None = Field(default=None, gt=0)

    _output_root: str | None = PrivateAttr(default=None)
    """The folder a path built from inputs must stay in, set by ``interpolate`` (None: a literal path)."""

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        return known_keys("task", cls, data)

    @field_validator("name")
    @classmethod
    def _name_not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("a task name may not be blank (leave it out to get task_<position>)")
        return value

    @field_validator("agent")
    @classmethod
    def _an_agent(cls, value: Any) -> Any:
        """Any object that works on tasks (an ``Agent``); a name is not one, as a Task is not in YAML."""
        if value is not None and not callable(getattr(value, "aexecute_task", None)):
            hint = ": pass the Agent itself (crew.yaml names agents by key)" if isinstance(value, str) else ""
            raise ValueError(f"must be an Agent, not {type(value).__name__} {value!r}"[:200] + hint)
        return value

    @field_validator("tools", mode="before")
    @classmethod
    def _wrap_functions(cls, value: Any) -> Any:
        return wrap_functions(value)

    @field_validator("tools")
    @classmethod
    def _one_tool_per_name(cls, value: Any) -> Any:
        return one_tool_per_name(value) if value else value

    @model_validator(mode="after")
    def _one_output_format(self) -> Task:
        if self.output_pydantic is not None and self.output_json is not None:
            raise ValueError("set output_pydantic or output_json, not both")
        return self

    @property
    def key(self) -> str:
        """The name used in errors before the crew has assigned a default one."""
        return self.name or _short(self.description)

    def interpolate(self, inputs: Mapping[str, Any], *, name: str | None = None) -> Task:
        """A copy with ``{placeholders}`` filled in description, expected output and output path.

        Raises ``MissingInputError`` naming each missing placeholder and the field it is in,
        and ``ConfigError`` when an input would put a ``..`` into the output path.
        """
        where = f"task '{name or self.key}'"
        errors: list[str] = []
        filled = {
            field: fill(getattr(self, field), inputs, where=f"{where} {field}", errors=errors)
            for field in ("description", "expected_output")
        }
        if errors:
            from crew.errors import MissingInputError

            raise MissingInputError("; ".join(errors), errors=errors)
        root = None
        if self.output_file is not None:
            filled["output_file"], root = fill_path(self.output_file, inputs, owner=where, errors=errors)
        if errors:
            from crew.errors import ConfigError, MissingInputError

            kind = MissingInputError if errors[0].startswith("missing input") else ConfigError
            raise kind("; ".join(errors), errors=errors)
        if name is not None:
            filled["name"] = name
        copy = self.model_copy(update=filled)
        copy._output_root = root
        return copy


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
