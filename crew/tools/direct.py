"""``invoke`` / ``ainvoke``: LangChain's calling convention, assembled from a tool's run steps.

A dict of arguments gives back the plain result; a tool call (a ``ToolCall`` or a
``{"name", "args", "id", "type": "tool_call"}`` dict) gives back a ``ToolResult``.
Failures become observations per ``handle_validation_error`` / ``handle_tool_error``.

The functions here only assemble steps a tool defines (validate, claim, execute,
format) into one generator, ``_steps``, that ``invoke`` and ``ainvoke`` drive (one runs the tool
inline, the other awaits it); :class:`ToolSteps` names them, so this module needs nothing from
``crew.tools.base`` (which calls into it) and a type checker sees every step it uses.
"""

from __future__ import annotations

import inspect
from collections.abc import Generator
from time import perf_counter
from typing import Any, Literal, Protocol, cast

from pydantic import BaseModel

from crew.common.blocking import run_blocking
from crew.errors import ToolArgumentsError
from crew.tools.messages import RunContext, ToolCall, ToolResult, new_call_id

ToolInput = ToolCall | dict[str, Any] | str
_Run = tuple[dict[str, Any], RunContext | None]
"""The run step an invocation yields: the validated arguments and the context the tool receives."""


class ToolSteps(Protocol):
    """The run steps of a tool that the invocation entry points put together (``BaseTool`` has them)."""

    @property
    def tool_name(self) -> str: ...
    @property
    def injected_params(self) -> frozenset[str]: ...
    @property
    def args_schema(self) -> type[BaseModel]: ...
    @property
    def result_as_answer(self) -> bool: ...
    @property
    def response_format(self) -> Literal["content", "content_and_artifact"]: ...

    def validate_args(self, args: Any) -> dict[str, Any]: ...
    def _claim_usage(self) -> str | None: ...
    def _execute_sync(self, validated: dict[str, Any], context: RunContext | None) -> Any: ...
    async def _execute(self, validated: dict[str, Any], context: RunContext | None) -> Any: ...
    def format_result(self, raw: Any) -> tuple[str, Any]: ...
    def format_error(self, exc: Exception) -> str | None: ...
    def format_validation_error(self, exc: ToolArgumentsError) -> str | None: ...


def invoke(tool: ToolSteps, input: ToolInput, context: RunContext | None = None) -> Any:
    """Arguments dict -> the result; tool call ``{"name","args","id","type":"tool_call"}`` -> ToolResult."""
    steps = _steps(tool, input, context)
    try:
        validated, call_context = next(steps)
        try:
            raw = tool._execute_sync(validated, call_context)  # pyright: ignore[reportPrivateUsage] - the executor-facing steps
            if inspect.isawaitable(raw):
                raw = run_blocking(raw)
        except Exception as exc:  # noqa: BLE001 - a tool failure is an observation for the model
            raw = _Raised(exc)
        steps.send(raw)
    except StopIteration as done:
        return done.value
    raise AssertionError("the steps end once the tool has run")


async def ainvoke(tool: ToolSteps, input: ToolInput, context: RunContext | None = None) -> Any:
    """:func:`invoke` from async code: a sync tool runs in a worker thread."""
    steps = _steps(tool, input, context)
    try:
        validated, call_context = next(steps)
        try:
            raw = await tool._execute(validated, call_context)  # pyright: ignore[reportPrivateUsage] - the executor-facing steps
        except Exception as exc:  # noqa: BLE001 - a tool failure is an observation for the model
            raw = _Raised(exc)
        steps.send(raw)
    except StopIteration as done:
        return done.value
    raise AssertionError("the steps end once the tool has run")


def _steps(tool: ToolSteps, input: ToolInput, context: RunContext | None) -> Generator[_Run, Any, Any]:
    """An invocation written once: it yields the validated arguments and context for the driver to
    run the tool with, and gets the tool's value (or ``_Raised``) back; it returns what the caller gets."""
    args, call_id = _read_input(tool, input)
    started = perf_counter()
    validated = _admit(tool, args)
    if isinstance(validated, _Outcome):  # invalid arguments, or no usage slot left
        return _deliver(tool, call_id, started, validated)
    raw = yield validated, _call_context(tool, context, call_id)
    outcome = _failed(tool, raw.error) if isinstance(raw, _Raised) else _succeeded(tool, raw)
    return _deliver(tool, call_id, started, outcome)


def _admit(tool: ToolSteps, args: dict[str, Any]) -> dict[str, Any] | _Outcome:
    """The validated arguments with a usage slot taken, or the outcome that refuses the call."""
    try:
        validated = tool.validate_args(args)
    except ToolArgumentsError as exc:
        return _refused_arguments(tool, exc)
    refusal = tool._claim_usage()  # pyright: ignore[reportPrivateUsage] - the executor-facing steps
    if refusal is not None:
        return _Outcome("error", refusal, refused=True)
    return validated


def batch(tool: ToolSteps, inputs: list[Any], max_concurrency: int | None = None) -> list[Any]:
    """:func:`invoke` each input concurrently in threads; results in the inputs' order."""
    if not inputs:
        return []
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max_concurrency or min(32, len(inputs))) as pool:

        def one(item: Any) -> Any:
            return invoke(tool, item)

        return list(pool.map(one, inputs))


async def abatch(tool: ToolSteps, inputs: list[Any], max_concurrency: int | None = None) -> list[Any]:
    """:func:`ainvoke` each input concurrently; results in the inputs' order."""
    import asyncio

    gate = asyncio.Semaphore(max_concurrency or max(1, len(inputs)))

    async def one(item: Any) -> Any:
        async with gate:
            return await ainvoke(tool, item)

    return list(await asyncio.gather(*(one(item) for item in inputs)))


def _read_input(tool: ToolSteps, input: Any) -> tuple[Any, str | None]:
    if isinstance(input, ToolCall):
        return input.args, input.id
    if isinstance(input, dict):
        call = cast("dict[str, Any]", input)
        if call.get("type") == "tool_call":
            return call.get("args") or {}, call.get("id") or new_call_id()
    fields = tool.args_schema.model_fields
    if isinstance(input, str) and fields:  # LangChain: text is the first argument
        return {next(iter(fields)): input}, None
    return cast(Any, input), None


def _call_context(tool: ToolSteps, context: RunContext | None, call_id: str | None) -> RunContext | None:
    """A tool-call invocation tells injected parameters its call id, as the executor does."""
    if call_id is None or not tool.injected_params:
        return context
    return (context or RunContext()).model_copy(update={"tool_call_id": call_id})


def _refused_arguments(tool: ToolSteps, exc: ToolArgumentsError) -> _Outcome:
    text = tool.format_validation_error(exc)
    if text is None:
        raise exc
    return _Outcome("error", text)


def _failed(tool: ToolSteps, exc: Exception) -> _Outcome:
    text = tool.format_error(exc)
    if text is None:
        raise exc
    return _Outcome("error", text, raw=exc)


def _succeeded(tool: ToolSteps, raw: Any) -> _Outcome:
    try:
        content, artifact = tool.format_result(raw)
    except Exception as exc:  # noqa: BLE001 - a tool failure is an observation for the model
        return _failed(tool, exc)
    return _Outcome("success", content, raw=raw, artifact=artifact)


def _deliver(tool: ToolSteps, call_id: str | None, started: float, outcome: _Outcome) -> Any:
    if call_id is None:  # plain arguments in, plain value out (LangChain's behaviour)
        if outcome.status == "error":
            return outcome.content
        return outcome.raw[0] if tool.response_format == "content_and_artifact" else outcome.raw
    return ToolResult(
        content=outcome.content,
        tool_call_id=call_id,
        name=tool.tool_name,
        status=outcome.status,
        artifact=outcome.artifact,
        raw=outcome.raw,
        result_as_answer=tool.result_as_answer and outcome.status == "success",
        refused=outcome.refused,
        duration=perf_counter() - started,
    )


class _Raised:
    """What a driver sends back when the tool raised."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


class _Outcome:
    __slots__ = ("artifact", "content", "raw", "refused", "status")

    def __init__(
        self,
        status: Literal["success", "error"],
        content: str,
        *,
        raw: Any = None,
        artifact: Any = None,
        refused: bool = False,
    ) -> None:
        self.status: Literal["success", "error"] = status
        self.content = content
        self.raw = raw
        self.artifact = artifact
        self.refused = refused
