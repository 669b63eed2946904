"""``@tool``: a function becomes a ``Tool`` whose schema and description come from its code.

Forms (all return a ``Tool``)::

    @tool                               # name = function name
    @tool("custom_name")
    @tool(name=..., description=..., parse_docstring=True, max_usage_count=3, ...)
    tool("custom_name", func)           # no decorator syntax
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, overload

from pydantic import BaseModel, create_model

from crew.errors import ToolDefinitionError
from crew.tools.adapters import adapt_tool
from crew.tools.base import BaseTool
from crew.tools.definition import is_async_callable, pick_description
from crew.tools.docstrings import parse_google_docstring
from crew.tools.function_tool import Tool
from crew.tools.json_schema import model_from_json_schema
from crew.tools.recipe import generated
from crew.tools.schema import (
    annotation_description,
    args_config,
    build_args_model,
    model_name_for,
    signature_params,
)

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
    if name_or_callable is not None and not isinstance(name_or_callable, str):
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
    return [as_crew_tool(item) for item in items]


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


def build_tool(
    func: Callable[..., Any] | None = None,
    coroutine: Callable[..., Awaitable[Any]] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    args_schema: type[BaseModel] | dict[str, Any] | None = None,
    infer_schema: bool = True,
    parse_docstring: bool = False,
    error_on_invalid_docstring: bool = False,
    result_as_answer: bool | None = None,
    return_direct: bool | None = None,
    cache_function: Callable[[dict[str, Any], Any], bool] | None = None,
    **fields: Any,
) -> Tool:
    """The one place a function's code becomes a Tool's name, schema and description."""
    if coroutine is None and func is not None and is_async_callable(func):
        func, coroutine = None, func
    source = func if func is not None else coroutine
    if source is None:
        raise ToolDefinitionError("a tool needs a function and/or a coroutine function")
    if name is None:
        name = _callable_name(source)
        if name == "<lambda>":
            raise ToolDefinitionError(
                "a tool made from a lambda needs a name, since models call tools by name: "
                "tool('double', lambda x: 2 * x, description='Double x.')"
            )
    if _takes_self(source):
        raise ToolDefinitionError(
            f"Tool '{name}': the function's first parameter is 'self', so nothing would fill it; "
            f"build the tool from a bound method instead: tool(instance.{name})"
        )
    doc = getattr(source, "__doc__", None) if not isinstance(source, functools.partial) else source.func.__doc__
    summary = doc
    inferred = args_schema is None
    if isinstance(args_schema, dict):
        args_schema = generated(model_from_json_schema, args_schema, model_name_for(name), tool_name=name)
    if args_schema is None and not infer_schema:
        func, coroutine = _single_input(func), _single_input(coroutine)
        args_schema = generated(single_input_model, name)
    elif args_schema is None:
        params, injected = signature_params(source, name)
        parsed = parse_google_docstring(doc) if parse_docstring else None
        if parsed is not None:
            summary = parsed.summary
            if error_on_invalid_docstring:
                _check_docstring(name, doc, parsed.args, params, injected)
        args_schema = generated(inferred_model, source, name, parse_docstring)
    elif parse_docstring and doc:
        summary = parse_google_docstring(doc).summary
    chosen = pick_description(description, summary, args_schema)
    if chosen is None:
        raise ToolDefinitionError(
            f"Tool '{name}' has no description: give the function a docstring or pass description=... "
            "(the model reads it to decide when to call the tool)"
        )
    if inferred:  # LangChain's args_schema.model_json_schema() carries the tool's description
        args_schema.__doc__ = chosen
    if result_as_answer is not None and return_direct is not None and result_as_answer != return_direct:
        raise ToolDefinitionError(f"Tool '{name}': result_as_answer and its alias return_direct disagree")
    flag = result_as_answer if result_as_answer is not None else bool(return_direct)
    if cache_function is not None:
        fields["cache_function"] = cache_function
    return Tool(
        name=name,
        description=chosen,
        func=func,
        coroutine=coroutine,
        args_schema=args_schema,
        result_as_answer=flag,
        **fields,
    )


def inferred_model(source: Callable[..., Any], name: str, parse_docstring: bool) -> type[BaseModel]:
    """The argument model read from ``source``'s signature (and docstring): a recipe, see ``crew.tools.recipe``."""
    params, _ = signature_params(source, name)
    doc = getattr(source, "__doc__", None) if not isinstance(source, functools.partial) else source.func.__doc__
    parsed = parse_google_docstring(doc) if parse_docstring else None
    descriptions = parsed.args if parsed else None
    return build_args_model(model_name_for(name), params, tool_name=name, descriptions=descriptions)


def single_input_model(name: str) -> type[BaseModel]:
    """``infer_schema=False``: one string argument, ``tool_input``."""
    return create_model(model_name_for(name), __config__=args_config(name), tool_input=(str, ...))


def _callable_name(fn: Any) -> str:
    if isinstance(fn, functools.partial):
        return _callable_name(fn.func)
    return getattr(fn, "__name__", None) or type(fn).__name__


def _takes_self(fn: Any) -> bool:
    """A method taken from its class (``@tool`` in a class body): calls would miss ``self``."""
    try:
        first = next(iter(inspect.signature(fn).parameters), None)
    except (TypeError, ValueError):  # no signature to read (some builtins)
        return False
    return first == "self"


def _single_input(fn: Callable[..., Any] | None) -> Callable[..., Any] | None:
    """LangChain's un-inferred tool: one free-text argument passed positionally."""
    if fn is None:
        return None
    if is_async_callable(fn):

        async def call_async(tool_input: str) -> Any:
            return await fn(tool_input)

        return functools.wraps(fn)(call_async)

    def call(tool_input: str) -> Any:
        return fn(tool_input)

    return functools.wraps(fn)(call)


def _check_docstring(
    name: str, doc: str | None, documented: dict[str, str], params: list[inspect.Parameter], injected: frozenset[str]
) -> None:
    """With ``error_on_invalid_docstring``: every argument documented, nothing documented that does not exist."""
    if not doc:
        raise ToolDefinitionError(f"Tool '{name}': parse_docstring=True but the function has no docstring")
    known = {p.name for p in params} | injected
    unknown = [arg for arg in documented if arg not in known]
    if unknown:
        raise ToolDefinitionError(
            f"Tool '{name}': the docstring's Args section documents {', '.join(map(repr, unknown))}, "
            "which the function does not take"
        )
    missing = [
        p.name
        for p in params
        if p.name not in documented
        and not annotation_description(p.annotation)
        and not getattr(p.default, "description", None)
    ]
    if missing:
        raise ToolDefinitionError(
            f"Tool '{name}': the docstring does not document argument(s) {', '.join(map(repr, missing))}; "
            "add them under 'Args:' (Google style) or pass error_on_invalid_docstring=False"
        )
