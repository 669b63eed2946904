"""Crew.astream / Crew.stream / Agent.astream: the order and content of a streamed run.

Models are FunctionModels whose function is an async generator: each piece it yields is
one delta, so the test knows exactly what the provider "sent" and when.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import defaultdict
from contextlib import aclosing
from typing import Any

import pytest

from crew import Agent, Crew, CrewOutput, CrewRunError, Task, TaskOutput, tool
from crew.agent.loop import AgentStep
from crew.common.events import bus
from crew.models.info import current_call
from crew.stream import (
    AgentTurnStarted,
    RunStarted,
    StreamEvent,
    TaskFailed,
    TaskFinished,
    TaskStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    to_json,
)
from crew.testing import FunctionModel


async def talker(messages: list[dict[str, Any]], tools: Any):
    """Answers in five pieces naming its task, yielding to the loop between them (so tasks interleave)."""
    info = current_call()
    assert info is not None
    for i in range(5):
        await asyncio.sleep(0.002)
        yield f"{info.task}-{i} "


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"facts about {topic}"


def researcher_fn(messages: list[dict[str, Any]], tools: Any) -> Any:
    if messages[-1]["role"] == "tool":
        return "c-done c-facts c-gathered."
    return [{"name": "lookup", "args": {"topic": "bees"}}, {"name": "lookup", "args": {"topic": "bees"}}]


def graph_crew(steps: list[AgentStep]) -> Crew:
    writer = Agent(role="Writer", goal="write", llm=FunctionModel(talker))
    researcher = Agent(role="Researcher", goal="research", llm=FunctionModel(researcher_fn), tools=[lookup])
    tasks = [
        Task(name="a", description="a", expected_output="text", agent=writer),
        Task(name="b", description="b", expected_output="text", agent=writer),
        Task(name="c", description="c", expected_output="text", agent=researcher),
    ]
    tasks.append(Task(name="d", description="d", expected_output="text", agent=writer, context=tasks[:3]))
    return Crew(agents=[writer, researcher], tasks=tasks, process="graph", step_callback=steps.append)


async def test_graph_crew_streams_every_delta_under_its_task_and_ends_with_the_output():
    steps: list[AgentStep] = []
    items = [item async for item in graph_crew(steps).astream()]

    assert isinstance(items[-1], CrewOutput)
    assert all(isinstance(e, StreamEvent) for e in items[:-1])
    assert isinstance(items[0], RunStarted) and items[0].tasks == ["a", "b", "c", "d"]
    output = items[-1]
    assert {e.run_id for e in items[:-1]} == {output.run_id}

    deltas = [e for e in items if isinstance(e, TextDelta)]
    by_turn: dict[tuple[str, int], str] = defaultdict(str)
    for delta in deltas:
        assert delta.text.startswith(f"{delta.task}-")  # every delta belongs to its task
        by_turn[delta.task, delta.turn] += delta.text
    texts = {(s.task, s.turn): s.text for s in steps if s.kind == "final_answer"}
    for (task, turn), text in by_turn.items():
        assert text == texts[task, turn]  # a turn's deltas concatenate to the turn's text
    assert by_turn["a", 1] == output.task("a").raw
    assert set(task for task, _ in by_turn) == {"a", "b", "c", "d"}

    # a and b ran side by side: their deltas interleave, and d's came after both finished
    order = [d.task for d in deltas]
    first_b, last_a = order.index("b"), len(order) - 1 - order[::-1].index("a")
    assert first_b < last_a
    finished = {e.task: i for i, e in enumerate(items) if isinstance(e, TaskFinished)}
    started = {e.task: i for i, e in enumerate(items) if isinstance(e, TaskStarted)}
    first_delta = {
        task: next(i for i, e in enumerate(items) if isinstance(e, TextDelta) and e.task == task) for task in "abd"
    }
    for task in "abd":
        assert started[task] < first_delta[task] < finished[task]
    assert started["d"] > max(finished["a"], finished["b"], finished["c"])
    turns = [e for e in items if isinstance(e, AgentTurnStarted)]
    assert {(t.task, t.turn) for t in turns} >= {("a", 1), ("c", 1), ("c", 2)}

    # the researcher's two identical calls: both announced, one ran, the other shared its result
    tool_started = [e for e in items if isinstance(e, ToolCallStarted)]
    tool_finished = [e for e in items if isinstance(e, ToolCallFinished)]
    assert [(e.task, e.agent, e.tool, e.args) for e in tool_started] == [
        ("c", "Researcher", "lookup", {"topic": "bees"})
    ] * 2
    assert {e.call_id for e in tool_started} == {e.call_id for e in tool_finished}
    assert sorted(e.cached for e in tool_finished) == [False, True]
    for end in tool_finished:
        begin = next(i for i, e in enumerate(items) if isinstance(e, ToolCallStarted) and e.call_id == end.call_id)
        assert begin < items.index(end)


async def test_agent_astream_streams_a_prompt_and_ends_with_its_task_output():
    agent = Agent(role="Writer", goal="write", llm=FunctionModel(talker))
    items = [item async for item in agent.astream("Say something")]
    assert isinstance(items[-1], TaskOutput)
    deltas = [e for e in items if isinstance(e, TextDelta)]
    assert "".join(d.text for d in deltas) == items[-1].raw
    assert isinstance(items[0], AgentTurnStarted) and items[0].agent == "Writer"


def test_sync_stream_yields_the_same_events_and_leaves_no_thread():
    steps: list[AgentStep] = []
    before = set(threading.enumerate())
    items = list(graph_crew(steps).stream())
    assert isinstance(items[-1], CrewOutput)
    assert sum(isinstance(e, TextDelta) for e in items) == 18  # five per writer task, three for the researcher's answer
    assert [t for t in threading.enumerate() if t not in before and t.name == "crew-stream"] == []


async def test_a_failed_run_raises_after_the_events_that_led_to_it():
    def broken(messages: list[dict[str, Any]], tools: Any) -> str:
        raise RuntimeError("the model fell over")

    agent = Agent(role="Writer", goal="write", llm=FunctionModel(broken))
    crew = Crew(agents=[agent], tasks=[Task(name="only", description="x", expected_output="y", agent=agent)])
    seen: list[Any] = []
    with pytest.raises(CrewRunError, match="the model fell over"):
        async for item in crew.astream():
            seen.append(item)
    failed = [e for e in seen if isinstance(e, TaskFailed)]
    assert len(failed) == 1 and "the model fell over" in failed[0].error


async def test_every_event_writes_one_json_line():
    steps: list[AgentStep] = []
    lines = [to_json(item) async for item in graph_crew(steps).astream()]
    documents = [json.loads(line) for line in lines]
    assert all("\n" not in line for line in lines)
    assert documents[-1]["type"] == "output" and documents[-1]["output"]["tasks_output"][0]["name"] == "a"
    assert {"run.started", "task.started", "agent.turn", "text.delta", "tool.started", "tool.finished"} <= {
        d["type"] for d in documents
    }


# -- leaving early ----------------------------------------------------------------------------


async def test_breaking_out_cancels_the_run_and_leaves_nothing_running():
    gate = asyncio.Event()  # never set: task "slow" streams one piece and then waits forever
    entered = threading.Event()
    released = threading.Event()

    async def slow(messages: list[dict[str, Any]], tools: Any):
        yield "first piece "
        await gate.wait()
        yield "never"

    @tool
    def blocking(x: str) -> str:
        """A sync tool that holds its worker thread until released."""
        entered.set()
        released.wait(5)
        return "ok"

    def uses_tool(messages: list[dict[str, Any]], tools: Any) -> Any:
        return [{"name": "blocking", "args": {"x": "1"}}]

    slow_agent = Agent(role="Slow", goal="g", llm=FunctionModel(slow))
    tool_agent = Agent(role="Tooler", goal="g", llm=FunctionModel(uses_tool), tools=[blocking])
    crew = Crew(
        agents=[slow_agent, tool_agent],
        tasks=[
            Task(name="slow", description="s", expected_output="x", agent=slow_agent),
            Task(name="tooling", description="t", expected_output="x", agent=tool_agent),
        ],
        process="graph",
    )
    run_done: list[str] = []
    unsubscribe = bus.subscribe(lambda e: run_done.append(e.data["status"]) if e.type == "run.done" else None)
    try:
        async with aclosing(crew.astream()) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    await asyncio.to_thread(entered.wait, 5)  # the tool is in its thread too
                    break
        assert run_done == ["cancelled"]
        assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []
    finally:
        unsubscribe()
        released.set()


async def test_a_plain_break_cancels_the_run_once_the_generator_is_collected():
    gate = asyncio.Event()

    async def slow(messages: list[dict[str, Any]], tools: Any):
        yield "piece "
        await gate.wait()
        yield "never"

    agent = Agent(role="Slow", goal="g", llm=FunctionModel(slow))
    crew = Crew(agents=[agent], tasks=[Task(name="slow", description="s", expected_output="x", agent=agent)])
    async for event in crew.astream():
        if isinstance(event, TextDelta):
            break
    for _ in range(50):
        if [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []:
            break
        await asyncio.sleep(0.01)
    assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []


def test_breaking_a_sync_stream_stops_its_thread_before_the_loop_statement_ends():
    gate = threading.Event()

    async def slow(messages: list[dict[str, Any]], tools: Any):
        yield "piece "
        await asyncio.to_thread(gate.wait, 5)
        yield "late"

    agent = Agent(role="Slow", goal="g", llm=FunctionModel(slow))
    crew = Crew(agents=[agent], tasks=[Task(name="slow", description="s", expected_output="x", agent=agent)])
    for event in crew.stream():
        if isinstance(event, TextDelta):
            break
    gate.set()
    assert [t.name for t in threading.enumerate() if t.name == "crew-stream"] == []


# -- back-pressure -------------------------------------------------------------------------


async def test_a_slow_reader_pauses_model_text_but_not_tools_and_loses_nothing():
    produced: list[int] = []
    tool_ran = asyncio.Event()

    async def chatty(messages: list[dict[str, Any]], tools: Any):
        for i in range(40):
            produced.append(i)
            yield f"{i} "

    @tool
    def quick(x: str) -> str:
        """Answers at once."""
        return "done"

    def tooler(messages: list[dict[str, Any]], tools: Any) -> Any:
        if messages[-1]["role"] == "tool":
            tool_ran.set()
            return "tool used"
        return [{"name": "quick", "args": {"x": "1"}}]

    chatter = Agent(role="Chatter", goal="g", llm=FunctionModel(chatty))
    worker = Agent(role="Worker", goal="g", llm=FunctionModel(tooler), tools=[quick])
    crew = Crew(
        agents=[chatter, worker],
        tasks=[
            Task(name="chat", description="c", expected_output="x", agent=chatter),
            Task(name="work", description="w", expected_output="x", agent=worker),
        ],
        process="graph",
    )
    items: list[Any] = []
    async with aclosing(crew.astream(buffer=4)) as events:
        items.append(await anext(events))
        await asyncio.wait_for(tool_ran.wait(), 5)  # the reader is not reading: tools go on regardless
        await asyncio.sleep(0.05)
        assert len(produced) < 12  # the model's stream waits for room (4 events + the one in hand)
        async for item in events:
            items.append(item)
    deltas = [e.text for e in items if isinstance(e, TextDelta) and e.task == "chat"]
    assert deltas == [f"{i} " for i in range(40)]  # nothing dropped, in order
    assert isinstance(items[-1], CrewOutput) and items[-1].task("work").raw == "tool used"
