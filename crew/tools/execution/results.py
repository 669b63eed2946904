"""What the executor hands back and announces: the ``ToolResult`` a model reads, the ``tool.call`` event.

Kept apart from the pipeline so the executor reads as its steps; these are built on every
call, so they stay cheap (no validation pass, no event built when nobody listens).
"""

from __future__ import annotations

from collections.abc import Iterable
from time import perf_counter
from typing import Any

from crew.common.events import bus
from crew.tools.base import BaseTool
from crew.tools.messages import RunContext, ToolResult, ToolStatus

__all__ = [
    "build_result",
    "emit_args_dropped",
    "emit_tool_call",
    "exit_error",
    "unknown_tool",
    "unknown_tool_message",
]

_new = object.__new__


def build_result(
    content: str,
    call_id: str,
    name: str,
    status: ToolStatus,
    artifact: Any,
    raw: Any,
    as_answer: bool,
    cached: bool,
    refused: bool,
    duration: float,
) -> ToolResult:
    """A ToolResult from values the executor made itself (content is text, status a literal).

    Its slots are set without a validation pass: on a cache hit, validating them again
    would cost more than the whole rest of the call.
    """
    result = _new(ToolResult)
    result.content = content
    result.tool_call_id = call_id
    result.name = name
    result.status = status
    result.artifact = artifact
    result.raw = raw
    result.result_as_answer = as_answer
    result.cached = cached
    result.refused = refused
    result.pending = False  # a call waiting for approval is built elsewhere: it never ran
    result.duration = duration
    return result


def emit_tool_call(
    tool: str,
    args: Any,
    status: str,
    cached: bool,
    refused: bool,
    duration: float,
    context: RunContext | None,
    run_id: str | None,
    call_id: str | None = None,
    result: str | None = None,
) -> None:
    """Announce one finished call (the caller checked ``bus.enabled("tool.call")``)."""
    bus.emit(
        "tool.call",
        run_id=run_id,
        tool=tool,
        call_id=call_id,
        args=args,
        status=status,
        cached=cached,
        refused=refused,
        duration=duration,
        task=context and context.task,
        agent=context and context.agent,
        result=result,
    )


def emit_args_dropped(tool: str, dropped: Any, context: RunContext | None, run_id: str | None) -> None:
    """Announce arguments the tool does not take, left out of its call (the caller checked the bus)."""
    bus.emit(
        "tool.args_dropped",
        run_id=run_id,
        tool=tool,
        dropped=dropped,
        task=context and context.task,
        agent=context and context.agent,
    )


def exit_error(name: str, exc: BaseException) -> Exception:
    """A tool's ``SystemExit``/``KeyboardInterrupt`` as an ordinary error of that tool."""
    from crew.errors import ToolException

    if isinstance(exc, SystemExit):
        what = f"called sys.exit({exc.code!r})" if exc.code is not None else "called sys.exit()"
    else:
        what = "raised KeyboardInterrupt"
    error = ToolException(f"tool '{name}' {what}; the run goes on without its result")
    error.__cause__ = exc
    return error


def unknown_tool_message(requested: str, available: Iterable[str]) -> str:
    """What a model reads when it names no tool it has: the tools it has, and the closest name."""
    names = sorted(set(available))
    if not names:
        return f"Unknown tool '{requested}'. No tools are available."
    message = f"Unknown tool '{requested}'. Available tools: {', '.join(names)}."
    import difflib  # only a model that misspells a tool pays for it

    by_lower = {name.lower(): name for name in names}
    close = difflib.get_close_matches(requested.lower(), list(by_lower), n=1, cutoff=0.5)
    if close:
        message += f" Did you mean '{by_lower[close[0]]}'?"
    return message


def unknown_tool(
    requested: str,
    args: Any,
    call_id: str,
    available: Iterable[BaseTool],
    context: RunContext | None,
    run_id: str | None,
    start: float,
) -> ToolResult:
    """The error result (announced) of a call naming no tool among ``available``."""
    message = unknown_tool_message(requested, (t.tool_name for t in available))
    duration = perf_counter() - start
    if bus.enabled("tool.call"):
        emit_tool_call(requested, args, "error", False, False, duration, context, run_id, call_id, message)
    return ToolResult(content=message, tool_call_id=call_id, name=requested, status="error", duration=duration)
