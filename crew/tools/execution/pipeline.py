"""The steps of one tool call through the executor, written once for both of its drivers.

``Pipeline`` holds the steps; ``ToolExecutor`` (``crew.tools.execution.executor``) holds the
state they read (the registry, the cache, the counts, the calls in flight, the approver) and
the two drivers that run them, ``execute`` (sync code) and ``aexecute`` (async code).

A call is resolved and validated and looked up in the cache (``_prepare``: a repeated call
of a cacheable tool is served without the rest); a call that may wait (for a person's say,
for an identical call in flight) goes through the generator ``_flow``, which yields what only
a driver can do; any other runs at once: a usage slot (``_start``), the tool, the result
(``_end``). Counting, events and the hand-over to waiting identical calls happen here,
whichever driver runs the call.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Mapping, Sequence
from concurrent.futures import Future
from marshal import dumps
from time import perf_counter
from typing import Any

from crew.common.events import bus
from crew.common.secrets import generation, scrub
from crew.errors import ToolArgumentsError
from crew.tools import cache as cache_guard
from crew.tools.approval import (
    ApprovalRequest,
    Approver,
    DecisionKey,
    Verdict,
    approval,
    take_decision,
)
from crew.tools.base import BaseTool
from crew.tools.cache import CacheBackend, InMemoryCache, Recall, Seen, cache_key
from crew.tools.calling import known_keys
from crew.tools.execution.call import (
    LEADER_GONE,
    NOT_SHARED,
    Pending,
    Raised,
    SingleFlight,
    build_result,
    emit_args_dropped,
    emit_tool_call,
    unknown_tool,
)
from crew.tools.execution.counts import ToolTally, UsageCounts, UsageLimits
from crew.tools.execution.registry import ToolRegistry
from crew.tools.messages import RunContext, ToolCall, ToolResult, ToolStatus, read_call
from crew.tools.options import always_cache, never_cache

__all__ = ["Call", "Flow", "Pipeline", "Step"]

Call = ToolCall | Mapping[str, Any]
Step = Pending | Future[Any] | ApprovalRequest
"""What the pipeline asks a driver for: run this call's tool, wait for this identical call's
outcome, or ask the approver about this request."""
Flow = Generator[Step, Any, ToolResult]


class Pipeline:
    """The steps of a call; ``ToolExecutor`` sets the state they use and drives them."""

    run_id: str | None
    limits: UsageLimits | None
    cache: CacheBackend | None
    approver: Approver | None
    decisions: dict[DecisionKey, Any]
    _lock: threading.Lock
    _registry: ToolRegistry
    _tally: ToolTally
    _usage: UsageCounts
    _flight: SingleFlight
    _recall: Recall
    _seen: dict[bytes, Seen]

    def _bucket_for(self, tool: BaseTool) -> str:
        with self._lock:
            bucket, new = self._registry.bucket_for(tool)
            if new:
                self._tally.add_locked(bucket)
        return bucket

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
        """The tool's value (or ``Raised``) made the call's result, stored when it may be cached;
        the waiters get what was stored. One frame for all of it: this runs on every cache miss."""
        try:
            started: float = pending.ran  # pyright: ignore[reportAssignmentType] - set by _start
            seconds = perf_counter() - started
            if type(raw) is Raised:
                return self._failed(pending, raw.error, seconds)
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
            try:  # ``cache.raw_key`` inlined: this is every repeated call
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
