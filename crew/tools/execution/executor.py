"""The one place a tool call is executed, shared by every agent of a run.

Every call goes through the same pipeline: resolve the tool by name, validate the
arguments, serve it from the cache, else join an identical call already in flight,
else claim a usage slot and run the tool once. Whatever goes wrong on the model's
side (an unknown name, bad arguments, a tool exception, an exhausted limit) comes
back as an error ``ToolResult`` the model can read and act on; nothing is retried.

The sync entry point runs sync tools inline in the calling thread: a cache hit or a
cheap tool costs a few microseconds instead of the tens of microseconds an event
loop or a thread hop would add. ``aexecute`` never blocks its loop (sync tools go to a
worker thread). Shared state (usage counts, statistics, calls in flight) sits behind
one lock, so limits stay exact when threads and tasks race.

This module holds the executor's state and its two drivers; the steps are in ``pipeline``, and
each step's idea lives beside them: ``registry`` (names),
``call`` (the record of a call on its way, identical calls in flight, the result and event
built for each call), ``crew.tools.cache`` (a failing cache loses nothing; calls seen before: a
repeated call of a cacheable tool skips validation and is served without the general
pipeline), ``counts`` (usage slots, the ``UsageLimits`` hook, statistics),
``crew.tools.approval`` (a person's say: the approval step and its verdict).

The pipeline is written once. Its steps are plain methods (``_prepare``, ``_start``, ``_end``,
``_cut``...); what may have to wait is a generator (``_flow``: approval, then ``_run``: an
identical call in flight, then the tool) that ``execute`` and ``aexecute`` drive (the pattern
of httpx's ``auth_flow``). Each step that blocks or awaits is yielded to the driver, which does
it its own way: a sync tool inline or in a worker thread, a wait on an identical call with
``Future.result`` or ``asyncio.wrap_future``. A call with nothing to wait for (no approval asked,
nothing identical in flight: the common case) takes the same steps straight from its driver,
without a generator, whose sends and frames cost a cache miss about 0.7 µs.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from inspect import isawaitable
from typing import Any

from crew.common.blocking import run_blocking, running_loop
from crew.tools.approval import (
    ApprovalRequest,
    Approver,
    DecisionKey,
    ask_approver,
)
from crew.tools.base import NEVER_AWAITABLE, BaseTool
from crew.tools.cache import CacheBackend, Recall, as_backend
from crew.tools.execution.call import (
    NOT_SHARED,
    Pending,
    Raised,
    SingleFlight,
    exit_error,
)
from crew.tools.execution.counts import ToolTally, UsageCounts, UsageLimits
from crew.tools.execution.pipeline import Call, Flow, Pipeline, Step
from crew.tools.execution.registry import ToolRegistry, as_tools
from crew.tools.execution.stats import ToolStats
from crew.tools.messages import RunContext, ToolResult

__all__ = ["ToolExecutor", "ToolStats", "UsageLimits"]


class ToolExecutor(Pipeline):
    """Validates, caches, limits and runs tool calls for every agent of one run.

    ``cache`` is True (in-memory, lives with this executor), False (every call runs),
    or any ``CacheBackend`` such as ``SQLiteCache`` to share results across runs.
    ``limits`` is where usage slots of tools with a ``max_usage_count`` are claimed when
    they must be counted beyond this executor (one run spread over Ray workers); by
    default this executor counts them itself.
    """

    def __init__(
        self,
        tools: Iterable[BaseTool] = (),
        *,
        cache: bool | CacheBackend = True,
        run_id: str | None = None,
        limits: UsageLimits | None = None,
    ) -> None:
        self.run_id = run_id
        self.limits = limits
        self.cache: CacheBackend | None = as_backend(cache)
        self._lock = threading.Lock()
        self._registry = ToolRegistry()
        self._tally = ToolTally(self._lock)
        self._usage = UsageCounts(self._lock)
        self._flight = SingleFlight(self._lock)
        self._recall = Recall()
        self._seen = self._recall.seen
        self.approver: Approver | None = None
        """Decides calls whose tool ``requires_approval``; None: such calls come back ``pending``."""
        self.decisions: dict[DecisionKey, Any] = {}
        """Decisions made beforehand (a resumed run's ``approvals=``), each used once: by call id, or by
        ``(task, call id)`` when calls of several tasks share an id."""
        self.register(tools)

    # -- registry -----------------------------------------------------------------

    def register(self, tools: Iterable[BaseTool], *, buckets: Sequence[str] | None = None) -> None:
        """Make tools callable by name; registering a name again keeps the first tool.

        LangChain and CrewAI tool objects are adapted (``crew.tools.adapters``).

        Agents may hold distinct instances of one tool: they share the name's
        statistics, usage count and cache entries, and a call made with ``tools=``
        runs the caller's own instance. A different tool under a taken name (another
        agent's unrelated ``search``) is counted and cached apart, in the bucket ``search#2``.
        ``buckets``: the run's driver's bucket of each tool (a Ray worker registers only its task's).
        """
        tools = as_tools(tools)
        given = list(buckets) if buckets is not None else [None] * len(tools)  # the driver's, for a Ray worker
        with self._lock:
            for tool, known in zip(tools, given, strict=True):
                bucket = self._registry.add(tool, known)
                if bucket is not None:
                    self._tally.add_locked(bucket)

    def bucket_of(self, tool: BaseTool) -> str:
        """What ``tool``'s cache entries, usage and statistics are kept under here (see ``register``)."""
        return self._registry.known(tool) or tool.tool_name

    @property
    def tools(self) -> list[BaseTool]:
        return list(self._registry.by_name.values())

    @property
    def stats(self) -> dict[str, ToolStats]:
        """A consistent snapshot of every tool's counters, keyed by tool name."""
        return self._tally.snapshot()

    def add_stats(self, stats: Mapping[str, ToolStats]) -> None:
        """Count calls made by executors elsewhere (Ray workers of this run) in this one's statistics."""
        self._tally.merge(stats, self._usage)

    def usage(self, tool_name: str) -> int:
        """How many usage slots the tool has consumed in this executor (its runs, not its cache hits)."""
        return self._usage.used(self._registry.name_of(tool_name))

    # -- entry points: the two drivers of one pipeline ------------------------------

    def execute(
        self, call: Call, *, tools: Sequence[BaseTool] | None = None, context: RunContext | None = None
    ) -> ToolResult:
        """Run one call from sync code; a sync tool runs inline in this thread."""
        pending = self._prepare(call, tools, context)
        if isinstance(pending, ToolResult):  # finished already (a slotted dataclass: a cheap test)
            return pending
        flow = None if pending.key is None and not pending.tool.requires_approval else self._waits(pending)
        if flow is not None:
            return self._drive(flow)
        stop = self._start(pending)  # the common case: nothing to wait for, the tool runs now
        if stop is not None:
            return stop
        try:
            raw = self._run_inline(pending)
        except BaseException:
            self._cut(pending)
            raise
        return self._end(pending, raw)

    async def aexecute(
        self, call: Call, *, tools: Sequence[BaseTool] | None = None, context: RunContext | None = None
    ) -> ToolResult:
        """Run one call from async code; a sync tool runs in a worker thread."""
        pending = self._prepare(call, tools, context)
        if isinstance(pending, ToolResult):
            return pending
        flow = None if pending.key is None and not pending.tool.requires_approval else self._waits(pending)
        if flow is not None:
            return await self._adrive(flow)
        stop = self._start(pending)
        if stop is not None:
            return stop
        try:
            raw = await self._run_awaited(pending)
        except BaseException:  # cancelled (its task timed out): counted, re-raised
            self._cut(pending)
            raise
        return self._end(pending, raw)

    def _drive(self, flow: Flow) -> ToolResult:
        """The sync driver of a call that may wait: each step the pipeline yields is done here."""
        try:
            step = flow.send(None)
            while True:
                try:
                    reply = self._run_inline(step) if type(step) is Pending else self._answer(step)  # pyright: ignore[reportArgumentType] - no Pending
                except BaseException as exc:  # noqa: BLE001 - the pipeline counts and cleans up, then re-raises
                    step = flow.throw(exc)
                else:
                    step = flow.send(reply)
        except StopIteration as done:
            return done.value

    async def _adrive(self, flow: Flow) -> ToolResult:
        """The async driver of a call that may wait, never blocking the loop."""
        try:
            step = flow.send(None)
            while True:
                try:
                    reply = await self._aanswer(step)
                except BaseException as exc:  # noqa: BLE001 - cancelled (its task timed out): counted, re-raised
                    step = flow.throw(exc)
                else:
                    step = flow.send(reply)
        except StopIteration as done:
            return done.value

    def _answer(self, step: Future[Any] | ApprovalRequest) -> Any:
        """What the pipeline asked for other than a run, done from sync code."""
        if isinstance(step, Future):
            # Blocking on a leader that may be a task of the loop running in this very
            # thread would deadlock; such a caller runs the tool itself instead.
            return step.result() if step.done() or running_loop() is None else NOT_SHARED
        answer = self.approver(step)  # type: ignore[misc]  # asked only when there is one
        return run_blocking(answer) if isawaitable(answer) else answer

    async def _aanswer(self, step: Step) -> Any:
        """What the pipeline asked for, done from async code without blocking the loop."""
        if type(step) is Pending:
            return await self._run_awaited(step)
        if isinstance(step, Future):
            import asyncio

            return await asyncio.wrap_future(step)
        return await ask_approver(self.approver, step)  # type: ignore[arg-type]  # asked only when there is one

    def _run_inline(self, pending: Pending) -> Any:
        """The tool run in this thread (an async tool on a loop of its own): its value, or ``Raised``."""
        try:
            raw = pending.tool._execute_sync(pending.args, pending.tool_context(self.run_id))  # pyright: ignore[reportPrivateUsage] - the executor-facing steps
            if type(raw) not in NEVER_AWAITABLE and isawaitable(raw):
                raw = run_blocking(raw)
        except Exception as exc:  # noqa: BLE001 - a failing tool becomes an error observation, never a crash
            return Raised(exc)
        except SystemExit as exc:  # the tool's own sys.exit(): its error, not the process's end
            return Raised(exit_error(pending.name, exc))
        except KeyboardInterrupt as exc:
            if threading.current_thread() is threading.main_thread():
                raise  # in the main thread it may be the user's Ctrl-C
            return Raised(exit_error(pending.name, exc))
        return raw

    async def _run_awaited(self, pending: Pending) -> Any:
        """The tool run from async code (a sync tool in a worker thread): its value, or ``Raised``."""
        try:
            return await pending.tool._execute(pending.args, pending.tool_context(self.run_id))  # pyright: ignore[reportPrivateUsage] - the executor-facing steps
        except Exception as exc:  # noqa: BLE001 - a failing tool becomes an error observation, never a crash
            return Raised(exc)
        except (SystemExit, KeyboardInterrupt) as exc:  # the tool's own exit, not the user's Ctrl-C
            return Raised(exit_error(pending.name, exc))

    def execute_many(
        self, calls: Iterable[Call], *, tools: Sequence[BaseTool] | None = None, context: RunContext | None = None
    ) -> list[ToolResult]:
        """Run one model turn's calls concurrently from sync code; results in the calls' order.

        Works from any thread, with or without a running event loop.
        """
        calls = list(calls)
        if len(calls) <= 1:
            return [self.execute(call, tools=tools, context=context) for call in calls]
        return run_blocking(self.aexecute_many(calls, tools=tools, context=context))

    async def aexecute_many(
        self, calls: Iterable[Call], *, tools: Sequence[BaseTool] | None = None, context: RunContext | None = None
    ) -> list[ToolResult]:
        """Run one model turn's calls concurrently; results in the calls' order.

        When a tool asks to re-raise, its exception propagates and the turn's other
        calls are cancelled.
        """
        import asyncio

        tasks = [asyncio.ensure_future(self.aexecute(call, tools=tools, context=context)) for call in calls]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for task in tasks:
                task.cancel()
            raise
