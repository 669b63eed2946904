"""``invoke`` / ``ainvoke`` / ``batch``: LangChain's calling convention on top of a tool's run steps.

A dict of arguments gives back the plain result; a tool call (a ``ToolCall`` or a
``{"name", "args", "id", "type": "tool_call"}`` dict) gives back a ``ToolResult``.
Failures become observations per ``handle_validation_error`` / ``handle_tool_error``.
The mixin only assembles steps ``BaseTool`` defines (validate, claim, execute, format).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from time import perf_counter
from typing import TYPE_CHECKING, Any

from crew.errors import ToolArgumentsError
from crew.tools.calls import RunContext, ToolCall, ToolResult, new_call_id

if TYPE_CHECKING:
    from crew.tools.base import BaseTool

    _Base = BaseTool
else:
    _Base = object


class Invocation(_Base):
    """LangChain-style entry points shared by every tool (mixed into ``BaseTool``)."""

    def invoke(self, input: ToolCall | dict[str, Any] | str, *, context: RunContext | None = None) -> Any:
        """Arguments dict -> the result; tool call ``{"name","args","id","type":"tool_call"}`` -> ToolResult.

        Errors become observations per ``handle_validation_error`` / ``handle_tool_error``.
        """
        args, call_id = self._read_input(input)
        started = perf_counter()
        try:
            validated = self.validate_args(args)
        except ToolArgumentsError as exc:
            return self._deliver(call_id, started, self._refused_arguments(exc))
        refusal = self._claim_usage()
        if refusal is not None:
            return self._deliver(call_id, started, _Outcome("error", refusal, refused=True))
        try:
            raw = self._execute_sync(validated, self._call_context(context, call_id))
            if inspect.isawaitable(raw):
                raw = run_coroutine_sync(raw)
        except Exception as exc:  # noqa: BLE001 - a failing tool becomes an error observation, never a crash
            return self._deliver(call_id, started, self._failed(exc))
        return self._deliver(call_id, started, self._succeeded(raw))

    async def ainvoke(self, input: ToolCall | dict[str, Any] | str, *, context: RunContext | None = None) -> Any:
        """The async twin of ``invoke``."""
        args, call_id = self._read_input(input)
        started = perf_counter()
        try:
            validated = self.validate_args(args)
        except ToolArgumentsError as exc:
            return self._deliver(call_id, started, self._refused_arguments(exc))
        refusal = self._claim_usage()
        if refusal is not None:
            return self._deliver(call_id, started, _Outcome("error", refusal, refused=True))
        try:
            raw = await self._execute(validated, self._call_context(context, call_id))
        except Exception as exc:  # noqa: BLE001 - a failing tool becomes an error observation, never a crash
            return self._deliver(call_id, started, self._failed(exc))
        return self._deliver(call_id, started, self._succeeded(raw))

    def batch(self, inputs: list[Any], *, max_concurrency: int | None = None) -> list[Any]:
        """``invoke`` each input concurrently in threads; results in the inputs' order."""
        if not inputs:
            return []
        with ThreadPoolExecutor(max_workers=max_concurrency or min(32, len(inputs))) as pool:
            return list(pool.map(self.invoke, inputs))

    async def abatch(self, inputs: list[Any], *, max_concurrency: int | None = None) -> list[Any]:
        """``ainvoke`` each input concurrently; results in the inputs' order."""
        import asyncio

        gate = asyncio.Semaphore(max_concurrency or max(1, len(inputs)))

        async def one(item: Any) -> Any:
            async with gate:
                return await self.ainvoke(item)

        return list(await asyncio.gather(*(one(item) for item in inputs)))

    def _read_input(self, input: Any) -> tuple[Any, str | None]:
        if isinstance(input, ToolCall):
            return input.args, input.id
        if isinstance(input, dict) and input.get("type") == "tool_call":
            return input.get("args") or {}, input.get("id") or new_call_id()
        if isinstance(input, str) and self.args_schema.model_fields:  # LangChain: text is the first argument
            return {next(iter(self.args_schema.model_fields)): input}, None
        return input, None

    def _call_context(self, context: RunContext | None, call_id: str | None) -> RunContext | None:
        """A tool-call invocation tells injected parameters its call id, as the executor does."""
        if call_id is None or not self.injected_params:
            return context
        return (context or RunContext()).model_copy(update={"tool_call_id": call_id})

    def _refused_arguments(self, exc: ToolArgumentsError) -> _Outcome:
        text = self.format_validation_error(exc)
        if text is None:
            raise exc
        return _Outcome("error", text)

    def _failed(self, exc: Exception) -> _Outcome:
        text = self.format_error(exc)
        if text is None:
            raise exc
        return _Outcome("error", text, raw=exc)

    def _succeeded(self, raw: Any) -> _Outcome:
        try:
            content, artifact = self.format_result(raw)
        except Exception as exc:  # noqa: BLE001 - a result that cannot be formatted is the tool's error
            return self._failed(exc)
        return _Outcome("success", content, raw=raw, artifact=artifact)

    def _deliver(self, call_id: str | None, started: float, outcome: _Outcome) -> Any:
        if call_id is None:  # plain arguments in, plain value out (LangChain's behaviour)
            if outcome.status == "error":
                return outcome.content
            return outcome.raw[0] if self.response_format == "content_and_artifact" else outcome.raw
        return ToolResult(
            content=outcome.content,
            tool_call_id=call_id,
            name=self.tool_name,
            status=outcome.status,
            artifact=outcome.artifact,
            raw=outcome.raw,
            result_as_answer=self.result_as_answer and outcome.status == "success",
            refused=outcome.refused,
            duration=perf_counter() - started,
        )


class _Outcome:
    __slots__ = ("artifact", "content", "raw", "refused", "status")

    def __init__(
        self, status: str, content: str, *, raw: Any = None, artifact: Any = None, refused: bool = False
    ) -> None:
        self.status, self.content, self.raw, self.artifact, self.refused = status, content, raw, artifact, refused


def run_coroutine_sync(coro: Coroutine[Any, Any, Any] | Awaitable[Any]) -> Any:
    """Finish a coroutine from sync code; inside a running loop it runs on a separate thread's loop."""

    import asyncio  # here, not at module level: loading tools needs no event loop

    async def finish() -> Any:
        return await coro

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(finish())
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="crew-tool") as pool:
        return pool.submit(asyncio.run, finish()).result()
