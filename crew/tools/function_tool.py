"""``Tool``: a tool made from a plain function or coroutine function.

It is what every ``@tool`` form returns (LangChain's ``StructuredTool``): the
function's signature and docstring were read once, when the tool was built, so a call
only validates and runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from inspect import isawaitable
from typing import Any

from pydantic import ValidationError

from crew.errors import ToolDefinitionError
from crew.tools.base import _PLAIN, BaseTool
from crew.tools.calls import RunContext
from crew.tools.definition import is_async_callable
from crew.tools.fields import validate_fields
from crew.tools.invocation import run_coroutine_sync
from crew.tools.threads import in_thread


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
        func = self.func
        if args or func is None or self.__pydantic_private__["_rt"].injected:  # pyright: ignore[reportOptionalSubscript]
            return super().run(*args, **kwargs)
        try:
            validated = validate_fields(self.args_schema, kwargs)
        except ValidationError:
            validated = self.validate_args(kwargs)  # extras under extra="forbid", or the readable error
        refusal = self._claim_usage()
        if refusal is not None:
            return refusal
        result = func(**validated)
        if type(result) not in _PLAIN and isawaitable(result):
            result = run_coroutine_sync(result)
        return result

    def _execute_sync(self, validated: dict[str, Any], context: RunContext | None) -> Any:
        """The function called directly (two calls fewer than through ``_run``) when nothing is injected."""
        func = self.func
        if func is None or self.__pydantic_private__["_rt"].injected:  # pyright: ignore[reportOptionalSubscript]
            return super()._execute_sync(validated, context)
        return func(**validated)

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        if self.func is None:
            return run_coroutine_sync(self.coroutine(*args, **kwargs))  # type: ignore[misc]
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
        from crew.tools.decorator import build_tool

        return build_tool(func, coroutine, name=name, description=description, **options)
