"""From a run's scope to stream events: its bus events, its model calls and its text deltas.

A :class:`Listener` attaches to the :class:`~crew.agent.scope.RunScope` of the run being
streamed: it subscribes to that run's events (tasks, tool calls, approvals), hooks the
one door every model call goes through (a turn starts), and registers a delta sink, which
is what makes the scope ask models to stream. Each becomes a typed event in the buffer.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from crew.stream.events import (
    AgentTurnStarted,
    ApprovalRequested,
    RunStarted,
    StreamEvent,
    TaskFailed,
    TaskFinished,
    TaskSkipped,
    TaskStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from crew.stream.redact import DeltaScrubber

if TYPE_CHECKING:
    from crew.agent.meter import Meter
    from crew.agent.scope import RunScope
    from crew.common.events import Event
    from crew.models.base import LLMResponse, ModelDelta
    from crew.models.info import ModelCallInfo

__all__ = ["Listener", "Sink"]


def _run_started(run_id: str, data: dict[str, Any], at: float) -> StreamEvent:
    return RunStarted(
        run_id=run_id,
        time=at,
        crew=data.get("crew") or "",
        tasks=list(data.get("tasks") or ()),
        step=data.get("flow_step"),
    )


def _task_started(run_id: str, data: dict[str, Any], at: float) -> StreamEvent:
    return TaskStarted(run_id=run_id, time=at, task=data["task"], agent=data.get("agent"))


def _task_done(run_id: str, data: dict[str, Any], at: float) -> StreamEvent:
    return TaskFinished(run_id=run_id, time=at, task=data["task"], agent=data.get("agent"), output=data["output"])


def _task_failed(run_id: str, data: dict[str, Any], at: float) -> StreamEvent:
    return TaskFailed(
        run_id=run_id,
        time=at,
        task=data["task"],
        agent=data.get("agent"),
        error=data.get("error") or "",
        output=data["output"],
    )


def _task_skipped(run_id: str, data: dict[str, Any], at: float) -> StreamEvent:
    return TaskSkipped(run_id=run_id, time=at, task=data["task"], reason=data.get("error") or "", output=data["output"])


def _tool_started(run_id: str, data: dict[str, Any], at: float) -> StreamEvent:
    return ToolCallStarted(
        run_id=run_id,
        time=at,
        task=data.get("task"),
        agent=data.get("agent"),
        tool=data["tool"],
        call_id=data["call_id"],
        args=_args(data.get("args")),
    )


def _tool_finished(run_id: str, data: dict[str, Any], at: float) -> StreamEvent:
    return ToolCallFinished(
        run_id=run_id,
        time=at,
        task=data.get("task"),
        agent=data.get("agent"),
        tool=data["tool"],
        call_id=data.get("call_id"),
        status=data.get("status") or "success",
        cached=bool(data.get("cached")),
        refused=bool(data.get("refused")),
        duration=float(data.get("duration") or 0.0),
        result=data.get("result"),
    )


def _approval(run_id: str, data: dict[str, Any], at: float) -> StreamEvent:
    return ApprovalRequested(
        run_id=run_id,
        time=at,
        task=data.get("task"),
        agent=data.get("agent"),
        tool=data["tool"],
        call_id=data["call_id"],
        args=_args(data.get("args")),
    )


def _args(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


_CONVERTERS: dict[str, Callable[[str, dict[str, Any], float], StreamEvent]] = {
    "run.start": _run_started,
    "task.start": _task_started,
    "task.done": _task_done,
    "task.failed": _task_failed,
    "task.skipped": _task_skipped,
    "tool.start": _tool_started,
    "tool.call": _tool_finished,
    "approval.requested": _approval,
}


class Sink(Protocol):
    """Where a listener puts events: an ``EventBuffer``, or a Ray worker's relay to its driver."""

    def put(self, item: Any) -> None: ...

    def put_delta(self, item: Any) -> Awaitable[None] | None:
        """Take a text piece; an awaitable makes the model's stream wait for room."""
        ...


class Listener:
    """Feeds ``buffer`` from the scope it is attached to; ``detach`` stops it."""

    def __init__(self, buffer: Sink) -> None:
        self.buffer = buffer
        self._removers: list[Callable[[], None]] = []

    def attach(self, scope: RunScope) -> None:
        buffer, run_id = self.buffer, scope.run_id or ""  # a streamed run always has one

        def on_event(event: Event) -> None:
            convert = _CONVERTERS.get(event.type)
            if convert is not None and not event.data.get("from_worker"):  # a worker's, relayed as it happened
                buffer.put(convert(run_id, event.data, event.time))

        def on_call(info: ModelCallInfo, _meter: Meter) -> None:
            buffer.put(
                AgentTurnStarted(run_id=run_id, time=time.time(), task=info.task, agent=info.agent, turn=info.turn)
            )

        scrubbers: dict[int, tuple[ModelCallInfo, DeltaScrubber]] = {}
        """Each streaming call's scrubber, by the call's info (the same object for all its pieces)."""

        def delta(info: ModelCallInfo, text: str) -> TextDelta:
            return TextDelta(
                run_id=run_id, time=time.time(), task=info.task, agent=info.agent, text=text, turn=info.turn
            )

        def on_delta(info: ModelCallInfo, piece: ModelDelta) -> Any:
            if not piece.text:
                return None
            held = scrubbers.get(id(info))
            if held is None or held[0] is not info:
                held = scrubbers[id(info)] = (info, DeltaScrubber())
            text = held[1].feed(piece.text)
            return buffer.put_delta(delta(info, text)) if text else None

        def on_reply(info: ModelCallInfo, _response: LLMResponse, _meter: Meter) -> None:
            held = scrubbers.pop(id(info), None)
            text = held[1].flush() if held is not None and held[0] is info else ""
            if text:
                buffer.put(delta(info, text))

        def on_relayed(event: StreamEvent) -> Any:
            return buffer.put_delta(event) if isinstance(event, TextDelta) else buffer.put(event)

        self._removers += [
            scope.subscribe(on_event),
            scope.meter.before_call(on_call),
            scope.meter.on_delta(on_delta),
            scope.meter.after_call(on_reply),
            scope.on_relayed(on_relayed),
        ]

    def detach(self) -> None:
        while self._removers:
            self._removers.pop()()
