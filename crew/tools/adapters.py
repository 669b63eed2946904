"""LangChain and CrewAI tool objects as crew tools.

Users have tools written for other frameworks that they will not rewrite. ``adapt_tool``
wraps such an object in a crew ``BaseTool`` so it goes through the one shared executor:
validation, the cache, ``max_usage_count``, ``result_as_answer`` and error observations
apply exactly as to a ``@tool`` function.

Neither library is imported here: the objects are recognised by their shape (and, for
LangChain, by the module their base class lives in), so ``import crew`` stays free of
both and a stand-in with the same attributes is adapted the same way.

- LangChain (``@tool``, ``StructuredTool``, ``BaseTool`` subclasses): called through
  ``invoke``/``ainvoke`` with a tool call, so the ``ToolMessage`` tells content, artifact
  and error status apart. ``return_direct`` means ``result_as_answer``. Arguments the
  model left out stay out of the call (LangChain's own ``_parse_input`` does the same).
- CrewAI (``crewai.tools.BaseTool`` subclasses, its ``@tool``): called through ``_run``
  (or ``_arun`` / an async ``func``) with the validated arguments dumped the way CrewAI's
  ``run`` does. Its ``run`` is bypassed because it counts usage on the object itself,
  across runs; our executor counts per run, with the tool's ``max_usage_count``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal, cast

from pydantic import BaseModel, Field

from crew.common.blocking import in_thread, run_blocking
from crew.errors import ToolDefinitionError, ToolException
from crew.tools.base import BaseTool
from crew.tools.json_schema import model_from_json_schema
from crew.tools.messages import new_call_id, to_text
from crew.tools.options import is_async_callable
from crew.tools.prepared import ToolRuntime
from crew.tools.schema import model_name_for

__all__ = ["ForeignTool", "adapt_tool", "foreign_kind"]

Kind = Literal["langchain", "crewai"]


def foreign_kind(obj: Any) -> Kind | None:
    """Which framework's tool ``obj`` is, judged by its shape; None for anything else (crew tools too)."""
    if isinstance(obj, BaseTool | type):
        return None
    name, description = getattr(obj, "name", None), getattr(obj, "description", None)
    if not isinstance(name, str) or not isinstance(description, str):
        return None
    if _from_module(obj, "langchain") or (
        callable(getattr(obj, "invoke", None)) and hasattr(obj, "return_direct") and hasattr(obj, "args_schema")
    ):
        return "langchain"
    if hasattr(obj, "args_schema") and hasattr(obj, "result_as_answer") and (_has(obj, "_run") or _has(obj, "run")):
        return "crewai"
    return None


def foreign_class(obj: Any) -> bool:
    """A LangChain or CrewAI tool class (named by import path in YAML): instantiate, then adapt."""
    if not isinstance(obj, type) or issubclass(obj, BaseTool):
        return False
    cls = cast("type[object]", obj)
    return _from_module(cls, "langchain", "crewai", cls=cls)


def adapt_tool(obj: Any) -> BaseTool | None:
    """``obj`` as a crew tool when it is a LangChain or CrewAI tool object, else None.

    The adapter keeps the foreign tool's name (models see the provider-safe spelling,
    e.g. ``Search the internet`` -> ``Search_the_internet``), its description and its
    argument schema. Raises ``ToolDefinitionError`` when the object looks like a foreign
    tool but its schema cannot be read.
    """
    kind = foreign_kind(obj)
    if kind == "langchain":
        return _langchain(obj)
    if kind == "crewai":
        return _crewai(obj)
    return None


_CALL = "__crew_call__"
"""The keyword a LangChain tool's ``RunContext`` arrives under (never shown to the model)."""


class ForeignTool(BaseTool):
    """A crew tool that delegates to a LangChain or CrewAI tool object (``wrapped``)."""

    wrapped: Any = Field(exclude=True, repr=False)
    kind: Kind
    native_async: bool = False
    async_only: bool = False  # LangChain's StructuredTool with a coroutine and no func

    @classmethod
    def _normalize_implementation(cls, data: dict[str, Any]) -> dict[str, Any]:
        if data.get("wrapped") is None:
            raise ToolDefinitionError(f"ForeignTool '{data.get('name', '?')}' needs the tool object it wraps")
        return data

    @classmethod
    def _signature_source(cls, data: dict[str, Any]) -> Callable[..., Any] | None:
        return None  # the schema always comes from the wrapped tool

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        if self.kind == "langchain":  # the call's RunContext comes along: its id is the model's tool-call id
            rt = self._rt
            self._rt = ToolRuntime(rt.native_async, rt.async_only, frozenset({_CALL}))

    def _has_native_async(self) -> bool:
        return self.native_async

    def _is_async_only(self) -> bool:
        return self.async_only

    def validate_args(self, args: Any) -> dict[str, Any]:
        """LangChain tools get only what the model sent (their own defaults fill the rest), as LangChain does."""
        validated = super().validate_args(args)
        if self.kind == "langchain" and isinstance(args, dict):
            return {key: value for key, value in validated.items() if key in args}
        return validated

    # -- calling ----------------------------------------------------------------------

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        if self.kind == "langchain":
            return self._from_message(self.wrapped.invoke(self._tool_call(kwargs)))
        kwargs.pop(_CALL, None)
        kwargs = self._crewai_kwargs(kwargs)
        target = self.wrapped._run if _has(self.wrapped, "_run") else self.wrapped.run
        result = target(**kwargs)
        if inspect.isawaitable(result):
            result = run_blocking(result)
        return result

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        if not self.native_async:
            return await in_thread(self._run, **kwargs)
        if self.kind == "langchain":
            return self._from_message(await self.wrapped.ainvoke(self._tool_call(kwargs)))
        kwargs.pop(_CALL, None)
        kwargs = self._crewai_kwargs(kwargs)
        func: Any = getattr(self.wrapped, "func", None)
        result = func(**kwargs) if _is_async(func) else self.wrapped._arun(**kwargs)
        return await result if inspect.isawaitable(result) else result

    def _tool_call(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """LangChain's ToolCall: its id (what ``InjectedToolCallId`` receives) is the model's call id."""
        context = kwargs.pop(_CALL, None)
        call_id = getattr(context, "tool_call_id", None) or new_call_id()
        return {"name": self.wrapped.name, "args": kwargs, "id": call_id, "type": "tool_call"}

    def _from_message(self, message: Any) -> Any:
        """A ``ToolMessage``'s content (and artifact); status ``error`` becomes an error observation."""
        content = getattr(message, "content", None)
        if content is None or not hasattr(message, "tool_call_id"):  # the tool returned something else itself
            return message
        text = _message_text(content)
        if getattr(message, "status", "success") == "error":
            raise ToolException(text)
        if self.response_format == "content_and_artifact":
            return text, getattr(message, "artifact", None)
        return text

    def _crewai_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """What CrewAI's ``run`` passes to ``_run``: the validated model dumped (nested models as dicts)."""
        if any(isinstance(value, BaseModel | list | dict) for value in kwargs.values()):
            return self.args_schema.model_validate(kwargs).model_dump()
        return kwargs


# -- building -------------------------------------------------------------------------


def _langchain(obj: Any) -> ForeignTool:
    name: str = obj.name
    schema = _langchain_schema(obj, name)
    is_artifact = getattr(obj, "response_format", "content") == "content_and_artifact"
    return ForeignTool(
        name=name,
        description=obj.description or _no_description(name),
        args_schema=schema,
        wrapped=obj,
        kind="langchain",
        native_async=_langchain_async(obj),
        async_only=getattr(obj, "coroutine", None) is not None and getattr(obj, "func", True) is None,
        result_as_answer=bool(getattr(obj, "return_direct", False)),
        response_format="content_and_artifact" if is_artifact else "content",
        tags=list(getattr(obj, "tags", None) or []),
        metadata=dict(getattr(obj, "metadata", None) or {}),
    )


def _langchain_schema(obj: Any, name: str) -> type[BaseModel]:
    """The model-visible schema: ``tool_call_schema`` (injected arguments hidden), else ``args``."""
    if getattr(obj, "args_schema", None) is None:  # LangChain's single-input ``Tool``: one string
        properties = dict(getattr(obj, "args", None) or {"tool_input": {"type": "string"}})
        return _schema_model({"type": "object", "properties": properties, "required": list(properties)}, name)
    schema = getattr(obj, "tool_call_schema", None) or obj.args_schema
    return _schema_model(schema, name)


def _langchain_async(obj: Any) -> bool:
    """A coroutine (``@tool`` on an ``async def``) or an ``_arun`` of the user's own; else threads."""
    if getattr(obj, "coroutine", None) is not None:
        return True
    owner = _defining_class(cast("type[object]", type(obj)), "_arun")
    return owner is not None and not owner.__module__.startswith("langchain")


def _crewai(obj: Any) -> ForeignTool:
    name: str = obj.name
    limit = getattr(obj, "max_usage_count", None)
    options: dict[str, Any] = {}
    cache_function = getattr(obj, "cache_function", None)
    if callable(cache_function):
        options["cache_function"] = cache_function
    return ForeignTool(
        name=name,
        description=_crewai_description(obj.description) or _no_description(name),
        args_schema=_schema_model(obj.args_schema, name),
        wrapped=obj,
        kind="crewai",
        native_async=_crewai_async(obj),
        result_as_answer=bool(getattr(obj, "result_as_answer", False)),
        max_usage_count=limit if isinstance(limit, int) and limit > 0 else None,
        **options,
    )


def _crewai_description(text: str) -> str:
    """CrewAI rewrites ``description`` to "Tool Name: ...\\nTool Arguments: ...\\nTool Description: ...";
    we render name and arguments ourselves, so only the author's text is kept."""
    marker = "Tool Description:"
    if text.startswith("Tool Name:") and marker in text:
        return text.split(marker, 1)[1].strip()
    return text.strip()


def _crewai_async(obj: Any) -> bool:
    if _is_async(getattr(obj, "func", None)):
        return True
    owner = _defining_class(cast("type[object]", type(obj)), "_arun")
    return owner is not None and not owner.__module__.startswith("crewai") and _is_async(getattr(obj, "_arun", None))


def _schema_model(schema: Any, name: str) -> type[BaseModel]:
    """A pydantic (v2) model class as it is; a JSON-schema dict or a pydantic v1 class rebuilt."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema
    if isinstance(schema, type) and callable(getattr(schema, "schema", None)):  # pydantic.v1
        schema = cast(Any, schema).schema()
    if isinstance(schema, dict):
        return model_from_json_schema(cast("dict[str, Any]", schema), model_name_for(name), tool_name=name)
    raise ToolDefinitionError(
        f"Tool '{name}': cannot read its argument schema ({type(schema).__name__}); "
        "give it a pydantic model class or a JSON-schema dict as args_schema"
    )


def _no_description(name: str) -> str:
    raise ToolDefinitionError(f"Tool '{name}' has an empty description; the model reads it to decide when to call it")


# -- small helpers ----------------------------------------------------------------------


def _message_text(content: Any) -> str:
    """LangChain content: a string, or a list of strings and ``{"type": "text", "text": ...}`` blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        items = cast("list[object]", content)
        parts = [_block_text(item) for item in items if isinstance(item, str | dict)]  # pyright: ignore[reportUnknownArgumentType] - a block's keys are not known
        texts = [part for part in parts if isinstance(part, str)]
        if len(texts) == len(parts):
            return "\n".join(texts)
    return to_text(content)


def _from_module(obj: Any, *prefixes: str, cls: type | None = None) -> bool:
    mro = (cls or type(obj)).__mro__
    return any(klass.__name__ == "BaseTool" and klass.__module__.startswith(prefixes) for klass in mro)


def _block_text(item: object) -> object:
    """A content block's text: a string as it is, a ``{"text": ...}`` block's text."""
    return item if isinstance(item, str) else cast("dict[str, object]", item).get("text")


def _defining_class(cls: type, attr: str) -> type | None:
    for klass in cls.__mro__:
        if attr in klass.__dict__:
            return klass
    return None


def _has(obj: Any, attr: str) -> bool:
    return callable(getattr(obj, attr, None))


def _is_async(fn: Any) -> bool:
    return fn is not None and is_async_callable(fn)
