"""A flow's stream: its steps as typed events, beside the events of the crews its steps run.

The bus events a flow run emits (``flow.started``, ``step.started``, ``step.done``,
``step.failed``, ``route.chosen``, ``flow.done``) become the :class:`FlowEvent` models here,
in the same buffer as the crews' stream events (``crew.stream``); a crew's
``RunStarted.step`` names the step that kicked it off. ``Flow.astream`` drives it.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from crew.common.events import Event, bus
from crew.stream.events import StreamEvent

if TYPE_CHECKING:
    from crew.stream.buffer import EventBuffer
    from crew.stream.listen import Listener

__all__ = [
    "FlowEvent",
    "FlowFinished",
    "FlowStarted",
    "RouteChosen",
    "StepFailed",
    "StepFinished",
    "StepStarted",
    "stream_flow",
]


class FlowEvent(StreamEvent):
    """The base of a flow's own stream events; ``run_id`` is the flow run's."""

    flow: str


class FlowStarted(FlowEvent):
    type: Literal["flow.started"] = "flow.started"
    state: dict[str, Any] = Field(default_factory=dict)


class StepStarted(FlowEvent):
    type: Literal["step.started"] = "step.started"
    step: str
    number: int = 1
    """Which run of the step this is (1, 2, ... in a loop)."""


class StepFinished(FlowEvent):
    type: Literal["step.done"] = "step.done"
    step: str
    number: int = 1
    output: Any = None
    duration: float = 0.0
    reused: bool = False
    """True when a resume handed on the output of a run that finished before, without running it."""


class StepFailed(FlowEvent):
    type: Literal["step.failed"] = "step.failed"
    step: str
    number: int = 1
    error: str = ""


class RouteChosen(FlowEvent):
    type: Literal["route.chosen"] = "route.chosen"
    step: str
    label: str
    heard: bool = True
    """False when no step waits for the label (the route ends there)."""


class FlowFinished(FlowEvent):
    type: Literal["flow.done"] = "flow.done"
    status: str
    steps: int = 0
    duration: float = 0.0


_TYPES: dict[str, type[FlowEvent]] = {
    "flow.started": FlowStarted,
    "step.started": StepStarted,
    "step.done": StepFinished,
    "step.failed": StepFailed,
    "route.chosen": RouteChosen,
    "flow.done": FlowFinished,
}


def as_stream_event(event: Event) -> FlowEvent | None:
    """The typed stream event of a flow's bus event (None for any other event)."""
    model = _TYPES.get(event.type)
    if model is None or event.run_id is None:
        return None
    fields = {k: v for k, v in event.data.items() if k in model.model_fields}
    return model(run_id=event.run_id, time=event.time, **fields)


def stream_flow(
    kickoff: Callable[..., Any], inputs: Mapping[str, Any] | None, *, buffer: int, run_id: str | None = None
) -> AsyncGenerator[Any, None]:
    """Run ``kickoff(inputs, run_id=...)`` (a flow's ``kickoff_async``) and yield its events, then its output.

    The flow's own events come from the bus (by run id); every crew a step kicks off is
    attached as it starts (``watch_runs_here``, set inside the run's task so that the steps'
    tasks and worker threads inherit it).
    """
    from crew.agent.scope import watch_runs_here
    from crew.stream.drive import stream_run

    run_id = run_id or uuid.uuid4().hex
    attach: list[Callable[[Any], None]] = []

    def watch(listener: Listener, events: EventBuffer) -> Callable[[], None]:
        attach.append(listener.attach)

        def on_event(event: Event) -> None:
            if event.run_id == run_id:
                typed = as_stream_event(event)
                if typed is not None:
                    events.put(typed)

        return bus.subscribe(on_event)

    async def start() -> Any:
        unwatch = watch_runs_here(attach[0])
        try:
            return await kickoff(inputs, run_id=run_id)
        finally:
            unwatch()

    return stream_run(run_id, start, buffer=buffer, watch=watch)
