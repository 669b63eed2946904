"""The Flow API as CrewAI users write it: starts, listeners, routers, or_/and_, state with an id."""

from __future__ import annotations

import asyncio
import threading
from enum import Enum

import pytest
from pydantic import BaseModel

from crew.errors import FlowDefinitionError, FlowStateError
from crew.flow import Flow, FlowState, and_, listen, or_, router, start


class Topic(BaseModel):  # no id field: CrewAI 1.15 refuses such a model
    topic: str = ""
    count: int = 0


def test_state_has_an_id_also_when_the_model_declares_none_and_inputs_set_it_before_the_first_step():
    seen: list[str] = []

    class F(Flow[Topic]):
        @start()
        def first(self):
            seen.append(self.state.topic)
            return self.state.topic.upper()

    flow = F()
    assert isinstance(flow.state, Topic) and len(flow.state.id) == 36  # type: ignore[attr-defined]
    assert flow.kickoff(inputs={"topic": "bees"}) == "BEES"
    assert seen == ["bees"]
    pinned = F()
    pinned.kickoff(inputs={"id": "run-1", "topic": "x"})
    assert pinned.flow_id == "run-1"


def test_initial_state_attribute_dict_state_and_flowstate_base():
    class Declared(FlowState):
        n: int = 1

    class A(Flow):
        initial_state = Declared

        @start()
        def go(self):
            return self.state.n

    class B(Flow):
        @start()
        def go(self):
            self.state["seen"] = True
            return sorted(self.state)

    assert A().kickoff() == 1
    assert B().kickoff(inputs={"x": 1}) == ["id", "seen", "x"]


def test_state_failing_its_model_names_the_field():
    class F(Flow[Topic]):
        @start()
        def go(self):
            return None

    with pytest.raises(FlowStateError, match=r"state field 'count' of Topic: .*integer.*'many'") as caught:
        F().kickoff(inputs={"count": "many"})
    assert caught.value.field == "count"


def test_listeners_get_the_trigger_output_and_the_last_step_output_is_returned():
    class F(Flow):
        @start()
        def a(self):
            return 2

        @listen(a)
        def double(self, value):
            return value * 2

        @listen("double")
        def announce(self):
            return "done"

    flow = F()
    assert flow.kickoff() == "done"
    assert flow.method_outputs == [2, 4, "done"]


def test_starts_run_concurrently_sync_steps_in_worker_threads():
    both = threading.Barrier(2, timeout=5)  # each start waits for the other: only concurrent runs pass
    threads: dict[str, str] = {}

    class F(Flow):
        @start()
        def one(self):
            threads["one"] = threading.current_thread().name
            both.wait()
            return 1

        @start()
        def two(self):
            threads["two"] = threading.current_thread().name
            both.wait()
            return 2

        @start()
        async def three(self):
            threads["three"] = threading.current_thread().name
            return 3

    F().kickoff()
    assert len(set(threads.values())) == 3  # the async one on the loop's thread, each sync one in a worker
    assert threads["three"] == threading.current_thread().name


def test_or_fires_once_per_trigger_and_and_once_when_all_have_completed_nested():
    calls: list[str] = []

    class F(Flow):
        @start()
        def a(self):
            return "a"

        @start()
        def b(self):
            return "b"

        @listen(a)
        def c(self):
            return "c"

        @listen(or_(a, b))
        def any_of(self, got):
            calls.append(f"or:{got}")

        @listen(and_(a, b))
        def all_of(self, got):
            calls.append("and")

        @listen(and_(c, or_(a, b)))
        def nested(self):
            calls.append("nested")

    F().kickoff()
    assert sorted(calls) == ["and", "nested", "or:a", "or:b"]


class Verdict(Enum):
    RETRY = "retry"
    DONE = "done"


def test_a_router_loops_through_a_labelled_start_and_fires_its_listeners_each_time():
    class Loop(Flow[Topic]):
        @start("retry")
        def draft(self):
            self.state.count += 1
            return f"draft {self.state.count}"

        @router(draft)
        def review(self, text):
            return Verdict.RETRY if self.state.count < 4 else Verdict.DONE

        @listen("retry")
        def note(self, label):
            return label

        @listen(Verdict.DONE.value)
        def publish(self):
            return f"published after {self.state.count}"

    flow = Loop()
    assert flow.kickoff() == "published after 4"
    outputs = flow.method_outputs
    assert outputs.count(Verdict.RETRY) == 3 and outputs.count("retry") == 3  # the router's, its listener's


def test_labelled_starts_run_at_kickoff_when_the_flow_has_no_unconditional_start():
    class F(Flow):
        @start("again")
        def only(self):
            return "ran"

    assert F().kickoff() == "ran"


def test_async_steps_and_kickoff_async():
    class F(Flow):
        @start()
        async def a(self):
            await asyncio.sleep(0)
            return 1

        @listen(a)
        async def b(self, x):
            return x + 1

    assert asyncio.run(F().kickoff_async()) == 2


def test_a_trigger_that_names_nothing_and_a_flow_without_start_are_refused_before_anything_runs():
    class Typo(Flow):
        @start()
        def a(self):
            raise AssertionError("must not run")

        @listen("aa")
        def b(self):
            return None

    with pytest.raises(FlowDefinitionError, match=r"step 'b' \(.*test_flow_core.py:\d+\) waits for 'aa'"):
        Typo().kickoff()

    class NoStart(Flow):
        @listen("x")
        def b(self):
            return None

    with pytest.raises(FlowDefinitionError, match="no @start"):
        NoStart().kickoff()
