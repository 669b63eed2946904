"""One call through the executor's pipeline: its record, the identical calls waiting on it, what it ends as.

``Pending`` is the record of one resolved, validated call on its way through. A plain class
with slots, not a pydantic model: the pipeline tells it from a finished ``ToolResult`` with
one ``isinstance`` and fills it in step by step.

``SingleFlight``: identical calls in flight run the tool once, the others wait for its value.
The first call with a cache key leads; an identical call arriving meanwhile gets a future
of the leader's outcome. A leader that stored nothing hands its waiters ``NOT_SHARED``
(they run the tool themselves); a leader that was cancelled hands them ``LEADER_GONE`` (one
of them takes the lead). The lock is the executor's own, so the calls in flight change
under the same lock as its usage counts and statistics.

What the call ends as: the ``ToolResult`` a model reads and the ``tool.call`` event, built on
every call, so they stay cheap (no validation pass, no event built when nobody listens).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from concurrent.futures import Future
from time import perf_counter
from typing import Any

from crew.common.events import bus
from crew.tools import cache as cache_guard
from crew.tools.base import BaseTool
from crew.tools.cache import CacheBackend, InMemoryCache
from crew.tools.messages import RunContext, ToolResult, ToolStatus

__all__ = [
    "LEADER_GONE",
    "NOT_SHARED",
    "Pending",
    "Raised",
    "SingleFlight",
    "build_result",
    "emit_args_dropped",
    "emit_tool_call",
    "exit_error",
    "unknown_tool",
    "unknown_tool_message",
]

NOT_SHARED = object()  # what a leader hands its waiters when it stored nothing: they run themselves
LEADER_GONE = object()  # what a cancelled leader hands its waiters: one of them takes the lead


class Raised:
    """What a driver sends back when the tool raised: the error its result is made from."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


class Pending:
    """One resolved, validated call on its way through the pipeline."""

    __slots__ = (
        "args",
        "bucket",
        "call_id",
        "context",
        "counted",
        "key",
        "leading",
        "name",
        "ran",
        "shared",
        "start",
        "tool",
        "waiters",
    )

    def __init__(
        self,
        tool: BaseTool,
        name: str,
        bucket: str,
        call_id: str,
        args: dict[str, Any],
        context: RunContext | None,
        start: float,
    ) -> None:
        self.tool = tool
        self.name = name  # what the model called it: results and events carry it
        self.bucket = bucket  # what its cache entries, usage and statistics are kept under (``ToolRegistry``)
        self.call_id = call_id
        self.args = args
        self.context = context
        self.start = start
        self.key: str | None = None
        self.leading = False  # True while identical calls may wait for this one
        self.waiters: Future[Any] | None = None  # created by the first identical call that waits
        self.shared: Any = NOT_SHARED  # the stored cache value, once there is one
        self.counted = False  # whether ToolStats counted this call already
        self.ran: float | None = None  # when the tool started (its usage slot taken), if it did

    def tool_context(self, run_id: str | None) -> RunContext | None:
        """The RunContext the tool receives: built only for tools that ask for one (``run_id``: the executor's)."""
        if not self.tool.injected_params:
            return self.context
        update: dict[str, Any] = {"run_id": (self.context.run_id if self.context is not None else None) or run_id}
        update["tool_call_id"] = self.call_id
        if self.context is None:
            return RunContext(**update)
        return self.context.model_copy(update=update)


class SingleFlight:
    """The calls in flight of one executor, by cache key."""

    __slots__ = ("_inflight", "_lock")

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock
        self._inflight: dict[str, Pending] = {}  # cache key -> the call computing it

    def join(self, pending: Pending, cache: CacheBackend, run_id: str | None) -> Future[Any] | None:
        """Lead the identical calls in flight (returns None) or get a future of the leader's outcome.

        The future is only built when a second identical call actually shows up, so an
        uncontended call pays for a dict entry, not for a Future and its condition lock.
        ``cache`` is read again once the lead is taken (``run_id``: the executor's, for its error event).
        """
        key: str = pending.key  # type: ignore[assignment]
        lock = self._lock
        lock.acquire()  # no ``with``: this runs on every cache miss, and only the Future below may raise
        leader = self._inflight.get(key)
        if leader is not None:
            try:
                if leader.waiters is None:
                    leader.waiters = Future()
                    leader.waiters.set_running_or_notify_cancel()  # a cancelled waiter cannot cancel it
                return leader.waiters
            finally:
                lock.release()
        self._inflight[key] = pending
        pending.leading = True
        lock.release()
        # The previous leader may have stored its result between our cache lookup and
        # our taking the lead: look again so that result is never computed twice.
        hit, value = (
            cache.get(key)
            if type(cache) is InMemoryCache
            else cache_guard.read(cache, key, pending.name, pending.context, run_id)
        )
        if not hit:
            return None
        pending.shared = value
        self.release(pending)
        done: Future[Any] = Future()
        done.set_result(value)
        return done

    def release(self, pending: Pending) -> None:
        """Hand the stored value (or the news that nothing was stored) to the waiters."""
        pending.leading = False
        lock = self._lock
        lock.acquire()  # no ``with``: nothing in between raises (the key is ours while we lead)
        del self._inflight[pending.key]  # type: ignore[arg-type]
        waiters = pending.waiters
        lock.release()
        if waiters is not None:
            waiters.set_result(pending.shared)


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
