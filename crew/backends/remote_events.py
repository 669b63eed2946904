"""A worker's events, carried back to the driver with its result and replayed there.

Events fire where the work happens; on a Ray worker nobody listens (no run store, no
progress view, no tracer). So a worker keeps the events of its kickoff or task that the
driver's listeners consume (as plain JSON data, already scrubbed by ``bus.emit``), sends
them back inside its result, and the driver publishes them on its own bus, where its run
recorder writes them. A worker that dies takes its list with it: only the attempt whose
result comes back is replayed, so every call is recorded exactly once. A stream of the
run gets the worker's model turns, text and tool calls as they happen instead
(``ray_graph.stream_task_on_worker``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from crew.common.events import Event, bus

RECORDED = frozenset({"task.start", "llm.call", "llm.error", "tool.call", "task.context"})
"""The event types a run recorder consumes (see ``crew.store.recorder``)."""

TURNS = frozenset({"agent.turn"})
"""What a tracer on the driver needs of a task beyond what is recorded: where each model turn ends."""

WHOLE_RUN = RECORDED | TURNS | frozenset({"run.start", "run.done", "task.done", "task.failed", "task.skipped"})
"""A kickoff run wholly on a worker: the driver announces none of its run's or tasks' steps itself."""


def wanted(types: Iterable[str] = RECORDED) -> frozenset[str]:
    """``types``, or nothing when no one on the driver would hear them (shipping messages costs)."""
    types = frozenset(types)
    return types if any(bus.enabled(t) for t in types) else frozenset()


@contextmanager
def collected(run_id: str, types: frozenset[str], task: str | None = None) -> Iterator[list[Event]]:
    """The events of run ``run_id`` (of ``task`` only, if given) of ``types`` emitted inside."""
    events: list[Event] = []
    if not types:
        yield events
        return

    def keep(event: Event) -> None:
        if event.run_id == run_id and event.type in types and (task is None or event.data.get("task") == task):
            events.append(portable(event))

    unsubscribe = bus.subscribe(keep, run_id=run_id)
    try:
        yield events
    finally:
        unsubscribe()


def portable(event: Event) -> Event:
    """The event with JSON data only: a tool's result object must not stop the result pickling."""
    data = json.loads(json.dumps(event.data, default=str))
    return Event(type=event.type, time=event.time, run_id=event.run_id, data=data)


def replay(events: Iterable[Event]) -> None:
    """Publish a worker's events on this process's bus, in the order they happened, marked
    ``from_worker``: a stream got them live (``RunScope.relay``) and does not take them twice.
    (Not ``replayed``: a ``task.context`` event's own ``replayed`` says its sections were those
    of the run a replay continued.)"""
    for event in events:
        bus.publish(event.model_copy(update={"data": {**event.data, "from_worker": True}}))
