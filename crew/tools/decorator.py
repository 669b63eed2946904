"""``@tool``: a function becomes a ``Tool`` whose schema and description come from its code.

Forms (all return a ``Tool``)::

    @tool                               # name = function name
    @tool("custom_name")
    @tool(name=..., description=..., parse_docstring=True, max_usage_count=3, ...)
    tool("custom_name", func)           # no decorator syntax
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast, overload

from pydantic import BaseModel

from crew.errors import ToolDefinitionError
from crew.tools.adapters import adapt_tool
from crew.tools.base import BaseTool
from crew.tools.function_tool import Tool, build_tool

Decorator = Callable[[Callable[..., Any]], Tool]


@overload
def tool(name_or_callable: Callable[..., Any], /) -> Tool: ...
@overload
def tool(name_or_callable: str, runnable: Callable[..., Any], /, **options: Any) -> Tool: ...
@overload
def tool(name_or_callable: str | None = None, /, **options: Any) -> Decorator: ...


def tool(
    name_or_callable: str | Callable[..., Any] | None = None,
    runnable: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    args_schema: type[BaseModel] | dict[str, Any] | None = None,
    infer_schema: bool = True,
    parse_docstring: bool = False,
    error_on_invalid_docstring: bool = True,
    result_as_answer: bool | None = None,
    return_direct: bool | None = None,
    max_usage_count: int | None = None,
    cache_function: Callable[[dict[str, Any], Any], bool] | None = None,
    response_format: str = "content",
    **fields: Any,
) -> Tool | Decorator:
    """Turn a function (sync or async) into a ``Tool``.

    ``name`` defaults to the function's name; the description is ``description=``,
    else the docstring (with ``parse_docstring=True``: its summary, and the ``Args:``
    entries describe the arguments), else the ``args_schema``'s description. Without
    any of these the tool cannot tell the model what it is for, so building fails.
    ``infer_schema=False`` skips type hints: the tool takes one string ``tool_input``.
    ``return_direct`` is LangChain's name for ``result_as_answer``. Other keyword
    arguments (``result_schema``, ``env_vars``, ``handle_tool_error``,
    ``handle_validation_error``, ``tags``, ``metadata``, ``extras``) are ``Tool`` fields.
    """
    options: dict[str, Any] = dict(
        description=description,
        args_schema=args_schema,
        infer_schema=infer_schema,
        parse_docstring=parse_docstring,
        error_on_invalid_docstring=error_on_invalid_docstring,
        result_as_answer=result_as_answer,
        return_direct=return_direct,
        max_usage_count=max_usage_count,
        cache_function=cache_function,
        response_format=response_format,
        **fields,
    )
    if runnable is not None:  # tool("name", func)
        if not isinstance(name_or_callable, str):
            raise ToolDefinitionError("tool(name, func) needs the name as a string first")
        return build_tool(runnable, name=_one_name(name_or_callable, name), **options)
    if isinstance(name_or_callable, BaseTool):
        raise ToolDefinitionError(f"{name_or_callable.name!r} is already a tool")
    if callable(name_or_callable):  # bare @tool, or tool(func, ...)
        return build_tool(name_or_callable, name=name, **options)
    if name_or_callable is not None and not isinstance(name_or_callable, str):  # pyright: ignore[reportUnnecessaryIsInstance] - callers outside typed code pass anything
        raise ToolDefinitionError(f"tool() takes a function or a name, got {type(name_or_callable).__name__}")
    chosen = _one_name(name_or_callable, name) if name_or_callable is not None else name

    def decorate(fn: Callable[..., Any]) -> Tool:
        if not callable(fn):
            raise ToolDefinitionError(f"@tool decorates a function, got {type(fn).__name__}")
        return build_tool(fn, name=chosen, **options)

    return decorate


def wrap_functions(items: Any) -> Any:
    """The one place a ``tools=`` list is normalised: LangChain and CrewAI tool objects are
    adapted (``adapt_tool``), plain functions become tools (``@tool`` applied), so
    ``tools=[search, langchain_tool]`` just works.

    The ``mode="before"`` validator of ``Agent.tools`` and ``Task.tools``, and what
    ``ToolExecutor.register`` applies; anything else passes through for the field's own
    validation to judge.
    """
    if not isinstance(items, (list, tuple)):
        return items
    return [as_crew_tool(item) for item in cast("list[Any] | tuple[Any, ...]", items)]


def as_crew_tool(item: Any) -> Any:
    """One ``tools=`` entry as a crew tool when it can be one, else unchanged."""
    if isinstance(item, BaseTool):
        return item
    adapted = adapt_tool(item)
    if adapted is not None:
        return adapted
    return tool(item) if callable(item) else item


def _one_name(positional: str, keyword: str | None) -> str:
    if keyword is not None and keyword != positional:
        raise ToolDefinitionError(f"tool name given twice: {positional!r} and name={keyword!r}")
    return positional
