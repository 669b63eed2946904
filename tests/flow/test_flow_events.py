"""A flow's steps are events on the bus, its crews' events nest under their step, and it streams."""

from __future__ import annotations

import asyncio

from crew import Agent, Crew, Task
from crew.common.events import Event, bus
from crew.flow import Flow, listen, router, start
from crew.flow.events import FlowFinished, FlowStarted, RouteChosen, StepFinished, StepStarted
from crew.stream import RunStarted, TaskFinished, TextDelta
from crew.testing import TestModel


def _crew(description: str) -> Crew:
    agent = Agent(role="writer", goal="write", backstory="writes", llm=TestModel())
    return Crew(agents=[agent], tasks=[Task(description=description, expected_output="a line", agent=agent)])


class Writing(Flow):
    @start()
    def research(self):  # a sync step: its crew runs on the worker thread's own loop
        return _crew("research bees").kickoff().raw

    @router(research)
    def check(self, notes):
        return "good" if notes else "empty"

    @listen("good")
    async def write(self):
        return (await _crew("write about bees").kickoff_async()).raw


def test_steps_routes_and_the_run_are_bus_events_and_crew_events_name_their_step():
    seen: list[Event] = []
    unsubscribe = bus.subscribe(seen.append)
    try:
        Writing().kickoff()
    finally:
        unsubscribe()
    flow_run = next(e.run_id for e in seen if e.type == "flow.started")
    mine = [(e.type, e.data.get("step")) for e in seen if e.run_id == flow_run]
    assert mine == [
        ("flow.started", None),
        ("step.started", "research"),
        ("step.done", "research"),
        ("step.started", "check"),
        ("step.done", "check"),
        ("route.chosen", "check"),
        ("step.started", "write"),
        ("step.done", "write"),
        ("flow.done", None),
    ]
    crews = [e for e in seen if e.type == "run.start"]
    assert [(e.data["flow_run"], e.data["flow_step"]) for e in crews] == [(flow_run, "research"), (flow_run, "write")]
    nested = [e for e in seen if e.type == "task.done"]
    assert {e.data["flow_step"] for e in nested} == {"research", "write"}
    assert seen[-1].type == "flow.done" and seen[-1].data["status"] == "done"


def test_astream_yields_the_steps_and_their_crews_events_in_order_then_the_output():
    async def read() -> list[object]:
        return [item async for item in Writing().astream()]

    items = asyncio.run(read())
    assert isinstance(items[0], FlowStarted) and isinstance(items[-2], FlowFinished)
    assert items[-1] == items[-3].output  # the output of the last step, after the flow's end
    flow_run = items[0].run_id
    steps = [(type(i).__name__, i.step) for i in items if isinstance(i, StepStarted | StepFinished | RouteChosen)]
    assert steps == [
        ("StepStarted", "research"),
        ("StepFinished", "research"),
        ("StepStarted", "check"),
        ("StepFinished", "check"),
        ("RouteChosen", "check"),
        ("StepStarted", "write"),
        ("StepFinished", "write"),
    ]
    crews = [i for i in items if isinstance(i, RunStarted)]
    assert [c.step for c in crews] == ["research", "write"] and all(c.run_id != flow_run for c in crews)
    for crew in crews:  # each crew's events come after its step started and before the step finished
        own = [n for n, i in enumerate(items) if getattr(i, "run_id", None) == crew.run_id]
        started = next(n for n, i in enumerate(items) if isinstance(i, StepStarted) and i.step == crew.step)
        finished = next(n for n, i in enumerate(items) if isinstance(i, StepFinished) and i.step == crew.step)
        assert started < min(own) and max(own) < finished
        kinds = {type(items[n]) for n in own}
        assert TaskFinished in kinds and TextDelta in kinds


def test_the_sync_stream_twin():
    items = list(Writing().stream())
    assert isinstance(items[0], FlowStarted) and isinstance(items[-1], str)
