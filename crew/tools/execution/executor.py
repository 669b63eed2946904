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

This module is the pipeline; each step's idea lives beside it: ``registry`` (names),
``call`` (the record of a call on its way, identical calls in flight, the result and event
built for each call), ``caching`` (a failing cache loses nothing; calls seen before: a
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
from collections.abc import Generator, Iterable, Mapping, Sequence
from concurrent.futures import Future
from inspect import isawaitable
from marshal import dumps
from time import perf_counter
from typing import Any

from crew.common.blocking import run_blocking, running_loop
from crew.common.events import bus
from crew.common.secrets import generation, scrub
from crew.errors import ToolArgumentsError
from crew.tools.approval import (
    ApprovalRequest,
    Approver,
    DecisionKey,
    Verdict,
    approval,
    ask_approver,
    take_decision,
)
from crew.tools.arguments import known_keys
from crew.tools.base import NEVER_AWAITABLE, BaseTool
from crew.tools.cache import CacheBackend, InMemoryCache, as_backend, cache_key
from crew.tools.execution import caching as cache_guard
from crew.tools.execution.caching import Recall, Seen
from crew.tools.execution.call import (
    LEADER_GONE,
    NOT_SHARED,
    Pending,
    Raised,
    SingleFlight,
    build_result,
    emit_args_dropped,
    emit_tool_call,
    exit_error,
    unknown_tool,
)
from crew.tools.execution.counts import ToolTally, UsageCounts, UsageLimits
from crew.tools.execution.registry import ToolRegistry, as_tools
from crew.tools.execution.stats import ToolStats
from crew.tools.messages import RunContext, ToolCall, ToolResult, ToolStatus, read_call
from crew.tools.options import always_cache, never_cache

__all__ = ["ToolExecutor", "ToolStats", "UsageLimits"]

Call = ToolCall | Mapping[str, Any]
Step = Pending | Future[Any] | ApprovalRequest
"""What the pipeline asks a driver for: run this call's tool, wait for this identical call's
outcome, or ask the approver about this request."""
Flow = Generator[Step, Any, ToolResult]


class ToolExecutor:
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

    def _bucket_for(self, tool: BaseTool) -> str:
        with self._lock:
            bucket, new = self._registry.bucket_for(tool)
            if new:
                self._tally.add_locked(bucket)
        return bucket

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
        flow = self._waits(pending)
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
        flow = self._waits(pending)
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

    # -- the pipeline, written once -------------------------------------------------

    def _waits(self, pending: Pending) -> Flow | None:
        """The pipeline of a call that may have to wait (for a person's say, or for an identical call
        in flight), for a driver to run; None when the tool can run at once (no approval asked,
        nothing identical in flight): the drivers then take the same steps without a generator."""
        if pending.tool.requires_approval:
            return self._flow(pending)
        if pending.key is not None:
            waiting = self._flight.join(pending, self.cache, self.run_id)  # type: ignore[arg-type]
            if waiting is not None:  # an identical call is in flight (or just stored its value)
                return self._run(pending, waiting)
        return None

    def _flow(self, pending: Pending) -> Flow:
        """A resolved, validated call from approval to its result. It yields what only a driver
        can do (ask the approver, wait for an identical call in flight, run the tool) and gets
        the answer sent back; an exception in a driver is thrown in, so counting and clean-up
        happen here whichever driver runs it."""
        tool = pending.tool
        context = pending.context
        verdict = yield from approval(
            tool.requires_approval,
            pending.name,
            pending.args,
            pending.call_id,
            context,
            self._run_id(context),
            self._decided,
            self.approver is not None,
        )
        stop = self._apply(pending, verdict)
        if stop is not None:
            return stop
        waiting = None if pending.key is None else self._flight.join(pending, self.cache, self.run_id)  # type: ignore[arg-type]
        return (yield from self._run(pending, waiting))

    def _run(self, pending: Pending, waiting: Future[Any] | None) -> Flow:
        """After approval: the identical call's stored value when there is one to wait for (``waiting``),
        else the tool's run, from its usage slot to its result."""
        if waiting is not None:
            shared = yield from self._joined(pending, waiting)
            if shared is not NOT_SHARED:
                return self._hit(pending, shared)
        stop = self._start(pending)
        if stop is not None:
            return stop
        try:
            raw = yield pending
        except BaseException:
            self._cut(pending)
            raise
        return self._end(pending, raw)

    def _start(self, pending: Pending) -> ToolResult | None:
        """Claim a usage slot: None, the tool may run (from here an unwound call was a run cut short);
        else the limit's refusal. A leader that will not run hands its waiters the lead back."""
        try:
            if self._usage.claim(pending.bucket, pending.tool.max_usage_count, self.limits):
                pending.ran = perf_counter()
                return None
            return self._refused(pending)
        except BaseException:
            self._unwound(pending)
            raise
        finally:
            if pending.ran is None and pending.leading:
                self._flight.release(pending)

    def _end(self, pending: Pending, raw: Any) -> ToolResult:
        """The tool's value (or ``Raised``) made the call's result; the waiters get what was stored."""
        try:
            started: float = pending.ran  # pyright: ignore[reportAssignmentType] - set by _start
            seconds = perf_counter() - started
            if type(raw) is Raised:
                return self._failed(pending, raw.error, seconds)
            return self._succeeded(pending, raw, seconds)
        except BaseException:  # a tool that asked for its exceptions: counted already, re-raised
            self._unwound(pending)
            raise
        finally:
            if pending.leading:
                self._flight.release(pending)

    def _cut(self, pending: Pending) -> None:
        """A run cut short by an exception (cancelled, interrupted): counted, its waiters told."""
        self._unwound(pending)
        if pending.leading:
            self._flight.release(pending)

    def _joined(self, pending: Pending, waiting: Future[Any]) -> Generator[Future[Any], Any, Any]:
        """The value the leader of identical calls stored, or ``NOT_SHARED`` when this call must run
        the tool: the leader stored nothing, this call took the lead from a cancelled one, or its
        driver cannot wait (see ``_answer``)."""
        while True:
            try:
                shared = yield waiting
            except BaseException:  # cancelled while waiting: still a call that named the tool
                self._abandoned(pending)
                raise
            if shared is not LEADER_GONE:
                return shared
            # the leader was cancelled: lead (or follow the waiter who does)
            again = self._flight.join(pending, self.cache, self.run_id)  # type: ignore[arg-type]
            if again is None:
                return NOT_SHARED
            waiting = again

    def _decided(self, request: ApprovalRequest) -> Any:
        """A decision given beforehand (``approvals=`` of a resumed run), taken once."""
        with self._lock:
            return take_decision(self.decisions, request)

    def _apply(self, pending: Pending, verdict: Verdict) -> ToolResult | None:
        """The approval step's verdict applied: None, the call goes on (perhaps with edited
        arguments, run as given and never shared through the cache); else its result."""
        if verdict.waiting is not None:
            return verdict.waiting
        if verdict.denied is not None:
            pending.key = None  # a denial is never cached
            return self._finish(pending, verdict.denied, "error")
        if verdict.arguments is not None:
            pending.key = None  # arguments a person wrote: run as given, not shared through the cache
            try:
                pending.args = pending.tool.validate_args(verdict.arguments)
            except ToolArgumentsError as exc:
                return self._invalid(pending, exc)
        return None

    def _prepare(
        self, call: Call, tools: Sequence[BaseTool] | None, context: RunContext | None
    ) -> ToolResult | Pending:
        """Resolve, validate and look up the cache: a finished result, or a call to run."""
        start = perf_counter()
        # ``type is`` first: isinstance against a pydantic model class goes through ABCMeta (slow)
        args: Any
        if type(call) is ToolCall or isinstance(call, ToolCall):
            requested, args, call_id = call.name, call.args, call.id
        else:
            requested, args, call_id = read_call(call)
        found = self._registry.lookup.get(requested) if tools is None else None  # the common case, inline
        if found is None:
            found = self._registry.resolve(requested, tools)
            if found is None:
                return self._unknown(requested, args, call_id, tools, context, start)
        tool, name, bucket = found
        if not bucket:  # a tool of the caller's own, not registered here (an agent's MCP tools)
            bucket = self._bucket_for(tool)
        cache = self.cache
        plain = type(args) is dict
        if plain and cache is not None:
            try:  # ``caching.raw_key`` inlined: this is every repeated call
                seen = self._seen.get(dumps((id(tool), args), 2))  # pyright: ignore[reportUnknownArgumentType] - a model's JSON
            except ValueError:  # a value marshal cannot write exactly: validated below
                seen = None
            if seen is not None and seen.tool is tool:  # validated before: same arguments, same key
                key = seen.key
                hit, value = cache.get(key) if type(cache) is InMemoryCache else self._read(cache, key, name, context)
                if hit:
                    return self._served(seen, value, call_id, context, start)
                pending = Pending(tool, name, bucket, call_id, dict(seen.args), context, start)
                pending.key = key
                return pending
        return self._validated(Pending(tool, name, bucket, call_id, args, context, start), plain)

    def _validated(self, pending: Pending, plain: bool) -> ToolResult | Pending:
        """Validate a call met for the first time (its arguments not seen before) and look up its result."""
        tool, raw = pending.tool, pending.args
        try:
            pending.args = tool.validate_args(raw)
        except ToolArgumentsError as exc:
            return self._invalid(pending, exc)
        dropped = False
        if plain:
            known = known_keys(tool.args_schema)
            dropped = known is not None and not known.issuperset(raw) and self._dropped(pending, raw)
        cache = self.cache
        if cache is None or tool.cache_function is never_cache:
            return pending
        pending.key = key = cache_key(pending.bucket, pending.args, tool.injected_params)
        if key is None:
            return pending
        if plain and not dropped:
            self._recall.keep(tool, pending.name, raw, dict(pending.args), key, self._tally.of(pending.bucket))
        name = pending.name
        hit, value = cache.get(key) if type(cache) is InMemoryCache else self._read(cache, key, name, pending.context)
        return self._hit(pending, value) if hit else pending

    def _dropped(self, pending: Pending, raw: dict[str, Any]) -> bool:
        """Whether the model sent arguments the tool does not take (left out, and announced)."""
        dropped = pending.tool.dropped_args(raw)
        if dropped and bus.enabled("tool.args_dropped"):
            emit_args_dropped(pending.name, dropped, pending.context, self._run_id(pending.context))
        return bool(dropped)

    def _unknown(
        self,
        requested: str,
        args: Any,
        call_id: str,
        tools: Sequence[BaseTool] | None,
        context: RunContext | None,
        start: float,
    ) -> ToolResult:
        available = self._registry.by_name.values() if tools is None else tools
        return unknown_tool(requested, args, call_id, available, context, self._run_id(context), start)

    def _read(self, cache: CacheBackend, key: str, name: str, context: RunContext | None) -> tuple[bool, Any]:
        return cache_guard.read(cache, key, name, context, self.run_id)

    def _served(
        self, seen: Seen, value: Mapping[str, Any], call_id: str, context: RunContext | None, start: float
    ) -> ToolResult:
        """A cache hit of a call seen before: counted, announced and built without the general pipeline."""
        kept = seen.hit
        if kept is None or kept[0] is not value or kept[1] != generation():
            kept = seen.remember(value)
        stats = seen.stats
        lock = self._lock
        lock.acquire()  # the counters the ToolTally keeps for this name; no ``with``: nothing in between raises
        stats.calls += 1
        stats.cache_hits += 1
        lock.release()
        duration = perf_counter() - start
        name = seen.name
        if bus.enabled("tool.call"):
            run_id = self._run_id(context)
            emit_tool_call(name, dict(seen.args), "success", True, False, duration, context, run_id, call_id, kept[2])
        as_answer = seen.tool.result_as_answer
        return build_result(kept[2], call_id, name, "success", kept[3], kept[4], as_answer, True, False, duration)

    def _unwound(self, pending: Pending) -> None:
        """A call left by an exception (cancelled, interrupted) before it was counted: it counts
        as abandoned, and the waiters of a leader that is gone get the lead (``LEADER_GONE``)."""
        if not pending.counted:
            self._abandoned(pending)
            if pending.leading:
                pending.shared = LEADER_GONE

    def _abandoned(self, pending: Pending) -> None:
        """Count a call that ended without a result (cancelled): ``calls`` counts every call, and
        ``runs`` one whose tool had started (it used a usage slot)."""
        pending.counted = True
        ran = pending.ran
        self._tally.abandoned(pending.bucket, None if ran is None else perf_counter() - ran)

    def _refused(self, pending: Pending) -> ToolResult:
        """No usage slot left: the tool's limit message, counted as refused."""
        return self._finish(pending, pending.tool.usage_limit_message, "error", refused=True)

    def _succeeded(self, pending: Pending, raw: Any, seconds: float) -> ToolResult:
        try:
            content, artifact = pending.tool.format_result(raw)
        except Exception as exc:  # noqa: BLE001 - e.g. a content_and_artifact tool that returned no pair
            return self._failed(pending, exc, seconds)
        key = pending.key
        if key is not None:
            tool, name, context = pending.tool, pending.name, pending.context
            if tool.cache_function is always_cache or cache_guard.worth_storing(
                tool, name, pending.args, raw, context, self.run_id
            ):
                value = {"content": content, "artifact": artifact, "raw": raw}
                cache = self.cache
                if type(cache) is InMemoryCache:  # a dict store, which cannot fail
                    cache.set(key, value)
                else:
                    cache_guard.store(cache, key, value, name, context, self.run_id)  # type: ignore[arg-type]
                pending.shared = value
        return self._finish(pending, content, "success", artifact=artifact, raw=raw, seconds=seconds)

    def _failed(self, pending: Pending, exc: Exception, seconds: float) -> ToolResult:
        text = pending.tool.format_error(exc)
        result = self._finish(pending, text or f"{type(exc).__name__}: {exc}", "error", raw=exc, seconds=seconds)
        if text is None:  # the tool asked for its exceptions to reach the caller
            raise exc
        return result

    def _hit(self, pending: Pending, value: Mapping[str, Any]) -> ToolResult:
        return self._finish(
            pending, value["content"], "success", artifact=value.get("artifact"), raw=value.get("raw"), cached=True
        )

    def _invalid(self, pending: Pending, exc: ToolArgumentsError) -> ToolResult:
        text = pending.tool.format_validation_error(exc)
        if text is None:  # handle_validation_error=False: the caller wants the exception
            raise exc
        return self._finish(pending, text, "error")

    def _finish(
        self,
        pending: Pending,
        content: str,
        status: ToolStatus,
        *,
        artifact: Any = None,
        raw: Any = None,
        cached: bool = False,
        refused: bool = False,
        seconds: float | None = None,
    ) -> ToolResult:
        """Count the outcome, announce it and build the result the model reads."""
        pending.counted = True
        content = scrub(content)  # an observation goes to a model: no secret in it
        self._tally.count(pending.bucket, status, cached, refused, seconds)
        duration = perf_counter() - pending.start
        if bus.enabled("tool.call"):
            context = pending.context
            emit_tool_call(
                pending.name,
                pending.args,
                status,
                cached,
                refused,
                duration,
                context,
                self._run_id(context),
                pending.call_id,
                content,
            )
        return build_result(
            content,
            pending.call_id,
            pending.name,
            status,
            artifact,
            raw,
            status == "success" and pending.tool.result_as_answer,
            cached,
            refused,
            duration,
        )

    def _run_id(self, context: RunContext | None) -> str | None:
        return (context.run_id if context is not None else None) or self.run_id
