"""The messages that cross the boundary between a model and the tools.

A ``ToolCall`` is what a model asks for; a ``ToolResult`` is what goes back to it.
``RunContext`` is what the runtime injects into tools that ask for it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from functools import cache
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.dataclasses import dataclass
from pydantic_core import to_jsonable_python


def new_call_id() -> str:
    return "call_" + uuid.uuid4().hex[:24]


STAND_IN = "[stand-in result: the tool did not run]"
"""How a dry run's result begins (the test model on the command line, without ``--live-tools``):
the progress view and the run store tell a stand-in from what a tool really returned by it."""


def is_stand_in(text: object) -> bool:
    """Whether a call's result text is a dry run's stand-in (see ``STAND_IN``)."""
    return isinstance(text, str) and text.startswith(STAND_IN)


class ToolCall(BaseModel):
    """A model's request to run one tool (LangChain's ``ToolCall`` shape)."""

    model_config = ConfigDict(defer_build=True)  # built on first use: loading a crew needs none

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    id: str = Field(default_factory=new_call_id)
    type: Literal["tool_call"] = "tool_call"


ToolStatus = Literal["success", "error"]


@dataclass(slots=True, config=ConfigDict(arbitrary_types_allowed=True, defer_build=True))
class ToolResult:
    """What a tool call produced, ready to go back to the model as a tool message.

    ``content`` is always text (what the model reads); ``raw`` keeps the Python
    value for callers that want it, and ``artifact`` is the second element of a
    ``content_and_artifact`` tool's return value (never shown to the model).

    A pydantic dataclass with slots, as PydanticAI's message parts are, not a ``BaseModel``:
    the executor builds one for every call, cache hits included, and setting slots costs a
    fifth of what a model instance does. Pydantic validates and serialises it wherever it is
    a field (checkpoints, steps); ``model_dump``, ``model_dump_json``, ``model_copy`` and
    ``model_validate(_json)`` are kept for callers written against the model.
    """

    content: str
    tool_call_id: str
    name: str
    status: ToolStatus = "success"
    artifact: Any = None
    raw: Any = Field(default=None, exclude=True, repr=False)
    result_as_answer: bool = False
    cached: bool = False
    refused: bool = False
    pending: bool = False  # waits for a person's approval: the tool has not run
    duration: float = 0.0

    def model_dump(self, **options: Any) -> dict[str, Any]:
        """The fields as a dict (``raw`` left out), with pydantic's dump options (``mode="json"``, ``exclude``...)."""
        return _result_adapter().dump_python(self, **options)

    def model_dump_json(self, **options: Any) -> str:
        """The fields as JSON text (``raw`` left out), with pydantic's dump options."""
        return _result_adapter().dump_json(self, **options).decode()

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> ToolResult:
        """A copy with ``update`` applied (validated), as ``BaseModel.model_copy`` made one."""
        import copy
        import dataclasses

        source = copy.deepcopy(self) if deep else self
        return dataclasses.replace(source, **dict(update or {}))

    @classmethod
    def model_validate(cls, data: Any) -> ToolResult:
        """A result from its dumped form (a dict, or a result as it is)."""
        return _result_adapter().validate_python(data)

    @classmethod
    def model_validate_json(cls, text: str | bytes) -> ToolResult:
        return _result_adapter().validate_json(text)


@cache
def _result_adapter() -> TypeAdapter[ToolResult]:
    return TypeAdapter(ToolResult)


class RunContext(BaseModel):
    """Runtime facts injected into a tool parameter annotated with this type.

    The parameter never appears in the model-visible schema and never enters the
    cache key; the executor fills it for every call.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    run_id: str | None = None
    task: str | None = None
    agent: str | None = None
    tool_call_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


def to_text(value: Any) -> str:
    """Render a tool's return value as the text a model reads.

    Strings go as they are, bytes decoded as UTF-8; models, dicts, lists, numbers and
    booleans as JSON (nested sets, dates, enums and models in their JSON form); anything
    else via str(), never as a quoted JSON string.
    """
    if isinstance(value, str):
        return value
    if type(value) is int:  # the common case of tiny tools; bool is not int here and stays "true"
        return repr(value)
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, dict | list | tuple | int | float):
        try:
            return _ENCODER.encode(value)
        except (TypeError, ValueError):  # e.g. a circular reference
            return str(cast(object, value))
    return str(value)


def jsonable(value: Any) -> Any:
    """The JSON form of a value json cannot encode: bytes as UTF-8 text, else pydantic's, else str()."""
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    return to_jsonable_python(value, fallback=str)


# Built once: json.dumps with any non-default option builds a new encoder per call (~2 µs).
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=jsonable)


def read_call(call: Mapping[str, Any]) -> tuple[str, Any, str]:
    """Name, arguments and id of a tool-call dict: ``{"name", "args", "id"}`` (``arguments`` accepted for ``args``),
    or one as an OpenAI-format reply holds it: ``{"id", "type": "function", "function": {"name", "arguments"}}``."""
    if not isinstance(call, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance] - callers outside typed code pass anything
        raise ValueError(f"a tool call needs a 'name' key holding the tool's name, got {call!r}")
    function = call.get("function")
    body = cast("Mapping[str, Any]", function) if "name" not in call and isinstance(function, Mapping) else call
    name = body.get("name")
    if not isinstance(name, str):
        raise ValueError(f"a tool call needs a 'name' key holding the tool's name, got {call!r}")
    args = body.get("args", body.get("arguments"))
    if isinstance(args, str):  # some models send the arguments as JSON text
        args = _parse_json_object(args)
    given: Any = {} if args is None else args
    return name, given, call.get("id") or new_call_id()


def _parse_json_object(text: str) -> Any:
    """Arguments sent as JSON text; text that is no JSON object is left for validation to report."""
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
