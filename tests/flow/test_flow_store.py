"""A flow run on the run store: every step recorded, its crews as children, resumed exactly once, replayed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel

from crew import Agent, Crew, CrewOutput, Task
from crew.errors import FlowDefinitionError, FlowStepError, StoreError
from crew.flow import Flow, listen, persist, router, start
from crew.store import RunStore
from crew.testing import TestModel


class Draft(BaseModel):
    turns: int = 0
    notes: list[str] = []


broken = {"publish": True}
ran: list[str] = []


@persist
class Writer(Flow[Draft]):
    @start("again")
    def draft(self):
        ran.append("draft")
        self.state.turns += 1
        return self.state.turns

    @router(draft)
    def review(self, turns):
        ran.append("review")
        return "again" if turns < 3 else "ready"

    @listen("ready")
    def research(self):
        ran.append("research")
        agent = Agent(role="researcher", goal="find", backstory="finds", llm=TestModel())
        crew = Crew(agents=[agent], tasks=[Task(description="find bees", expected_output="notes", agent=agent)])
        return crew.kickoff()

    @listen(research)
    def publish(self, found):
        ran.append("publish")
        self.state.notes.append(type(found).__name__)
        if broken["publish"]:
            raise RuntimeError("the printer is out of paper")
        return f"published after {self.state.turns} drafts"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    ran.clear()
    broken["publish"] = True
    return tmp_path / "runs.db"


def _latest_flow(db: RunStore):
    return next(r for r in db.runs() if r.kind == "flow")


def _failed_run(store: Path) -> str:
    flow = Writer(store=store)
    with pytest.raises(FlowStepError, match="step 'publish' failed: RuntimeError: the printer is out of paper"):
        flow.kickoff(inputs={"notes": ["start"]})
    assert flow._run is not None
    return flow._run.run_id


def test_every_step_run_is_recorded_with_its_output_and_state_and_the_crew_as_a_child(store: Path):
    run_id = _failed_run(store)
    db = RunStore(store)
    run = db.run(run_id)
    assert (run.kind, run.crew, run.status) == ("flow", "Writer", "failed")
    assert "step 'publish' failed" in (run.error or "")
    steps = db.steps(run_id)
    assert [(s.step, s.number, s.status) for s in steps] == [
        ("draft", 1, "done"),
        ("review", 1, "done"),
        ("draft", 2, "done"),
        ("review", 2, "done"),
        ("draft", 3, "done"),
        ("review", 3, "done"),
        ("research", 1, "done"),
        ("publish", 1, "failed"),
    ]
    assert steps[1].input == 1 and steps[1].output == "again" and steps[1].state["turns"] == 1
    assert steps[-1].state is not None and steps[-1].state["notes"] == ["start", "CrewOutput"]  # kept as it failed
    assert all(s.started_at is not None and s.finished_at is not None for s in steps)
    (child,) = db.children(run_id)
    assert (child.kind, child.parent_run, child.parent_step, child.status) == ("crew", run_id, "research", "done")
    assert run.usage.total_tokens == child.usage.total_tokens > 0  # the flow's usage is its crews'
    detail = db.detail(run_id)
    assert [c.run.id for c in detail.children] == [child.id] and detail.children[0].tasks[0].name


def test_resume_runs_only_the_unfinished_step_with_the_state_after_the_last_finished_one(store: Path):
    run_id = _failed_run(store)
    ran.clear()
    broken["publish"] = False
    assert Writer(store=store).resume() == "published after 3 drafts"
    assert ran == ["publish"]  # the loop's six step runs and the crew were handed on, not rerun
    db = RunStore(store)
    resumed = _latest_flow(db)
    assert (resumed.mode, resumed.continued_from, resumed.status) == ("resume", run_id, "done")
    steps = db.steps(resumed.id)
    assert [s.reused for s in steps] == [True] * 7 + [False]
    # from the state after 'research' (the last step that finished): what the failed 'publish' changed is not kept
    assert steps[-1].state is not None and steps[-1].state["notes"] == ["start", "CrewOutput"]
    assert len(db.children(resumed.id)) == 0  # the crew did not run again


def test_a_resume_of_a_flow_that_a_later_resume_finished_does_nothing(store: Path):
    run_id = _failed_run(store)
    broken["publish"] = False
    Writer(store=store).resume(run_id)
    ran.clear()
    with pytest.raises(StoreError, match=r"was resumed already by run \w+, which finished: nothing is left to do"):
        Writer(store=store).resume(run_id)
    with pytest.raises(StoreError, match="no unfinished run of flow Writer"):
        Writer(store=store).resume()
    finished = _latest_flow(RunStore(store)).id
    with pytest.raises(StoreError, match="finished: nothing to resume"):
        Writer(store=store).resume(finished)
    assert ran == []


def test_a_resume_that_fails_again_is_resumed_from_where_it_stopped(store: Path):
    run_id = _failed_run(store)
    with pytest.raises(FlowStepError):
        Writer(store=store).resume(run_id)
    ran.clear()
    broken["publish"] = False
    assert Writer(store=store).resume() == "published after 3 drafts"
    assert ran == ["publish"]


def test_replay_from_a_step_reruns_it_and_what_follows_it(store: Path):
    broken["publish"] = False
    flow = Writer(store=store)
    flow.kickoff()
    assert flow._run is not None
    ran.clear()
    assert Writer(store=store).replay(flow._run.run_id, from_step="research") == "published after 3 drafts"
    assert ran == ["research", "publish"]
    replayed = _latest_flow(RunStore(store))
    assert (replayed.mode, replayed.from_task) == ("replay", "research")
    with pytest.raises(FlowDefinitionError, match=r"no step 'reserch' \(its steps: draft, review, research, publish\)"):
        Writer(store=store).replay(flow._run.run_id, from_step="reserch")


def test_a_crew_with_its_own_store_is_still_the_flows_child(store: Path, tmp_path: Path):
    class Own(Flow):
        @start()
        def go(self):
            agent = Agent(role="r", goal="g", backstory="b", llm=TestModel())
            crew = Crew(agents=[agent], tasks=[Task(description="x", expected_output="y", agent=agent)], store=store)
            return crew.kickoff()

    flow = Own(store=store)
    assert isinstance(flow.kickoff(), CrewOutput)
    assert flow._run is not None
    assert [c.parent_step for c in RunStore(store).children(flow._run.run_id)] == ["go"]


def test_a_cancelled_run_is_interrupted_on_the_store_and_its_resume_reruns_the_step_that_was_running(store: Path):
    hold = {"wait": True}

    class Slow(Flow):
        @start()
        def first(self):
            return "first"

        @listen(first)
        async def second(self, got):
            if hold["wait"]:
                await asyncio.Event().wait()  # until cancelled
            return f"second after {got}"

    async def interrupted() -> str:
        flow = Slow(store=store)
        run = asyncio.ensure_future(flow.kickoff_async())
        while flow._run is None or not any(s == "first" for s, _ in flow._run.outputs):
            await asyncio.sleep(0)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        return flow._run.run_id

    run_id = asyncio.run(interrupted())
    db = RunStore(store)
    assert db.run(run_id).status == "interrupted"
    assert [(s.step, s.status) for s in db.steps(run_id)] == [("first", "done"), ("second", "interrupted")]
    hold["wait"] = False
    assert Slow(store=store).resume(run_id) == "second after first"
