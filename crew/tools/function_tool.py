"""``Tool``: a tool made from a plain function or coroutine function.

It is what every ``@tool`` form returns (LangChain's ``StructuredTool``):
:func:`build_tool`, beside it, reads the function's signature and docstring once, when
the tool is built, so a call only validates and runs.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from inspect import isawaitable
from typing import Any

from pydantic import BaseModel, ValidationError, create_model

from crew.common.blocking import in_thread, run_blocking
from crew.errors import ToolDefinitionError
from crew.tools.base import NEVER_AWAITABLE, BaseTool
from crew.tools.docstrings import parse_google_docstring
from crew.tools.json_schema import model_from_json_schema
from crew.tools.messages import RunContext
from crew.tools.options import is_async_callable, pick_description
from crew.tools.portable_schema import generated
from crew.tools.prepared import ToolRuntime
from crew.tools.schema import (
    annotation_description,
    args_config,
    build_args_model,
    model_name_for,
    signature_params,
)


class Tool(BaseTool):
    """A tool backed by a function and/or a coroutine function (LangChain's StructuredTool).

    ``run``/``invoke`` call ``func`` in this thread; ``arun``/``ainvoke`` await
    ``coroutine`` or, without one, run ``func`` in a worker thread.
    """

    func: Callable[..., Any] | None = None
    coroutine: Callable[..., Awaitable[Any]] | None = None

    @classmethod
    def _normalize_implementation(cls, data: dict[str, Any]) -> dict[str, Any]:
        func, coroutine = data.get("func"), data.get("coroutine")
        if func is None and coroutine is None:
            raise ToolDefinitionError(f"Tool '{data.get('name', '?')}' needs a func and/or a coroutine")
        if coroutine is None and is_async_callable(func):
            data["func"], data["coroutine"] = None, func
        return data

    @classmethod
    def _signature_source(cls, data: dict[str, Any]) -> Callable[..., Any] | None:
        return data.get("func") or data.get("coroutine")

    @classmethod
    def _docstring(cls, data: dict[str, Any]) -> str | None:
        source = cls._signature_source(data)
        return getattr(source, "__doc__", None) if source is not None else None

    def _has_native_async(self) -> bool:
        return self.coroutine is not None

    def _is_async_only(self) -> bool:
        return self.func is None

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """``BaseTool.run`` with the common case inlined (keyword arguments, a plain function, no
        injected context): validate, claim a usage slot, call. Every other case takes the general path."""
        state: dict[str, Any] = self.__dict__  # pyright: ignore[reportAssignmentType] - read (and written) past pydantic's attribute machinery
        func = state["func"]
        rt: ToolRuntime = self.__pydantic_private__["_rt"]
        if args or func is None or rt.injected:
            return super().run(*args, **kwargs)
        schema, validator = rt.fields
        if schema is not state["args_schema"]:
            validator = rt.validator(state["args_schema"])
        validated = None
        if validator is not None:
            try:
                validated, extra, _ = validator.validate_python(kwargs)
            except ValidationError:
                pass
            else:
                if extra:
                    validated = {**validated, **extra}
        if validated is None:  # the model's own validator, extras under extra="forbid", or the readable error
            validated = self.validate_args(kwargs)
        lock = rt.usage.lock  # the limit checked and the use counted in one step (``_claim_usage`` inlined)
        lock.acquire()  # no ``with``: nothing in between raises, and it costs a tenth of this call
        count = state["current_usage_count"]
        limit = state["max_usage_count"]
        if limit is not None and count >= limit:
            lock.release()
            return self.usage_limit_message
        state["current_usage_count"] = count + 1
        lock.release()
        result = func(**validated)
        if type(result) not in NEVER_AWAITABLE and isawaitable(result):
            result = run_blocking(result)
        return result

    def _execute_sync(self, validated: dict[str, Any], context: RunContext | None) -> Any:
        """The function called directly (two calls fewer than through ``_run``) when nothing is injected."""
        func = self.func
        rt: ToolRuntime = self.__pydantic_private__["_rt"]
        if func is None or rt.injected:
            return super()._execute_sync(validated, context)
        return func(**validated)

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        if self.func is None:
            return run_blocking(self.coroutine(*args, **kwargs))  # type: ignore[misc]
        return self.func(*args, **kwargs)

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        if self.coroutine is None:
            return await in_thread(self.func, *args, **kwargs)  # type: ignore[arg-type]
        return await self.coroutine(*args, **kwargs)

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any] | None = None,
        coroutine: Callable[..., Awaitable[Any]] | None = None,
        name: str | None = None,
        description: str | None = None,
        **options: Any,
    ) -> Tool:
        """Build a tool from a function (see ``crew.tools.tool`` for the options)."""
        return build_tool(func, coroutine, name=name, description=description, **options)


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
    name = _tool_name(source, name)
    inferred = args_schema is None
    if args_schema is None and not infer_schema:
        func, coroutine = _single_input(func), _single_input(coroutine)
        schema, summary = generated(single_input_model, name), docstring_of(source)
    else:
        schema, summary = _schema_and_summary(source, name, args_schema, parse_docstring, error_on_invalid_docstring)
    chosen = pick_description(description, summary, schema)
    if chosen is None:
        raise ToolDefinitionError(
            f"Tool '{name}' has no description: give the function a docstring or pass description=... "
            "(the model reads it to decide when to call the tool)"
        )
    if inferred:  # LangChain's args_schema.model_json_schema() carries the tool's description
        schema.__doc__ = chosen
    if cache_function is not None:
        fields["cache_function"] = cache_function
    return Tool(
        name=name,
        description=chosen,
        func=func,
        coroutine=coroutine,
        args_schema=schema,
        result_as_answer=_as_answer(name, result_as_answer, return_direct),
        **fields,
    )


def _tool_name(source: Callable[..., Any], name: str | None) -> str:
    """The tool's name: the one given, else the function's (a lambda has none; a method from its class cannot run)."""
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
    return name


def _schema_and_summary(
    source: Callable[..., Any],
    name: str,
    args_schema: type[BaseModel] | dict[str, Any] | None,
    parse_docstring: bool,
    error_on_invalid_docstring: bool,
) -> tuple[type[BaseModel], str | None]:
    """The argument model (given, from a JSON schema, or read from the signature) and the docstring
    text the description comes from (its summary alone when the docstring's ``Args:`` are parsed)."""
    doc = docstring_of(source)
    if isinstance(args_schema, dict):
        args_schema = generated(model_from_json_schema, args_schema, model_name_for(name), tool_name=name)
    if args_schema is not None:
        return args_schema, parse_google_docstring(doc).summary if parse_docstring and doc else doc
    summary = doc
    if parse_docstring:
        parsed = parse_google_docstring(doc)
        summary = parsed.summary
        if error_on_invalid_docstring:
            params, injected = signature_params(source, name)
            _check_docstring(name, doc, parsed.args, params, injected)
    return generated(inferred_model, source, name, parse_docstring), summary


def _as_answer(name: str, result_as_answer: bool | None, return_direct: bool | None) -> bool:
    """``result_as_answer``, or LangChain's alias ``return_direct``; given both, they must agree."""
    if result_as_answer is not None and return_direct is not None and result_as_answer != return_direct:
        raise ToolDefinitionError(f"Tool '{name}': result_as_answer and its alias return_direct disagree")
    return result_as_answer if result_as_answer is not None else bool(return_direct)


def inferred_model(source: Callable[..., Any], name: str, parse_docstring: bool) -> type[BaseModel]:
    """The argument model read from ``source``'s signature (and docstring): see ``crew.tools.portable_schema``."""
    params, _ = signature_params(source, name)
    doc = docstring_of(source)
    parsed = parse_google_docstring(doc) if parse_docstring else None
    descriptions = parsed.args if parsed else None
    return build_args_model(model_name_for(name), params, tool_name=name, descriptions=descriptions)


def single_input_model(name: str) -> type[BaseModel]:
    """``infer_schema=False``: one string argument, ``tool_input``."""
    return create_model(model_name_for(name), __config__=args_config(name), tool_input=(str, ...))


def docstring_of(source: Any) -> str | None:
    """What documents a callable: its own docstring; a partial's function's; a callable
    instance's class, else its ``__call__`` (where the arguments it reads are written)."""
    if isinstance(source, functools.partial):
        return docstring_of(source.func)
    doc = getattr(source, "__doc__", None)
    if doc is None and not inspect.isroutine(source) and not inspect.isclass(source):
        call = next((k.__dict__["__call__"] for k in type(source).__mro__ if "__call__" in k.__dict__), None)
        doc = getattr(call, "__doc__", None)  # the class's own ``__call__``, never ``type.__call__``'s text
    return doc


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
