"""A step asks a person: the run pauses on the store's approvals, `crew approve` answers, a resume goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import crew.cli
from crew.errors import FlowError, FlowPaused, StoreError
from crew.flow import Flow, HumanFeedbackResult, human_feedback, listen, start
from crew.store import RunStore

ran: list[str] = []


class Vacation(Flow):
    @start()
    def plan(self):
        ran.append("plan")
        return "two weeks in Lisbon"

    @listen(plan)
    def confirm(self, idea):
        ran.append("confirm")
        where = self.ask(f"Book {idea}? Where should we stay?")
        return f"booked {idea}, staying at {where}"


class Review(Flow):
    @start()
    @human_feedback(message="Publish this post?", emit=["approved", "rejected"], default_outcome="rejected")
    def draft(self):
        ran.append("draft")
        return "a post about bees"

    @listen("approved")
    def publish(self, result: HumanFeedbackResult):
        return f"published {result.output!r} ({result.feedback})"

    @listen("rejected")
    def shelve(self, result: HumanFeedbackResult):
        return f"shelved: {result.feedback}"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ran.clear()


def test_ask_pauses_on_a_store_and_a_resume_in_another_process_gets_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    store = tmp_path / "runs.db"
    monkeypatch.setenv("CREW_STORE", str(store))
    flow = Vacation(store=store)
    with pytest.raises(FlowPaused, match=r"step 'confirm' waits for an answer") as caught:
        flow.kickoff()
    paused = caught.value
    db = RunStore(store)
    assert db.run(paused.run_id).status == "paused"
    assert [(s.step, s.status) for s in db.steps(paused.run_id)] == [("plan", "done"), ("confirm", "paused")]
    run = paused.run_id[:12]
    with pytest.raises(StoreError, match=rf"waits for an answer to step 'confirm'.*crew approve {run} ask-confirm-1-1"):
        Vacation(store=store).resume(paused.run_id)  # unanswered: resuming would only ask again
    assert crew.cli.main(["approve", run, paused.call_id, "--args", '{"where": "x"}']) == 2
    assert crew.cli.main(["approve", run, paused.call_id, "--args", json.dumps({"answer": "the Bairro Alto"})]) == 0
    capsys.readouterr()
    ran.clear()
    assert crew.cli.main(["resume", run, "-q"]) == 0  # the CLI loads the flow class again, as another process does
    assert capsys.readouterr().out == "booked two weeks in Lisbon, staying at the Bairro Alto\n"
    assert ran == ["confirm"]  # the paused step runs again from its start; 'plan' is handed on
    assert crew.cli.main(["resume", run]) == 2  # continued once


def test_a_paused_resume_exits_3_on_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    store = tmp_path / "runs.db"
    monkeypatch.setenv("CREW_STORE", str(store))

    with pytest.raises(FlowPaused):
        Review(store=store).kickoff()
    first = next(r for r in RunStore(store).runs() if r.status == "paused")
    db = RunStore(store)
    db.execute("UPDATE runs SET status = 'failed' WHERE id = ?", (first.id,))  # as if it had crashed while asking
    db.execute("DELETE FROM approvals WHERE run_id = ?", (first.id,))
    assert crew.cli.main(["resume", first.id[:12], "-q"]) == 3  # asks again: paused, exit 3


def test_human_feedback_routes_on_the_outcome_its_answer_names():
    assert Review(answerer=lambda question: "approved, ship it").kickoff() == (
        "published 'a post about bees' (approved, ship it)"
    )
    assert Review(answerer=lambda question: "not yet").kickoff() == "shelved: not yet"  # the default outcome
    asked: list[str] = []
    Review(answerer=lambda q: asked.append(q) or "rejected").kickoff()
    assert asked == ["Publish this post?\n\na post about bees"]


def test_ask_without_a_store_or_an_answerer_says_what_would_make_it_work():
    with pytest.raises(FlowError, match=r"asks 'Book two weeks.*nobody can answer: run the flow on a run store"):
        Vacation().kickoff()
    assert Vacation(answerer=lambda q: "a hostel").kickoff() == "booked two weeks in Lisbon, staying at a hostel"


class Counted(Flow):
    @start()
    @human_feedback(message="Keep this draft?", emit=["keep", "drop"], default_outcome="drop")
    def draft(self):
        ran.append("draft")
        self.state["drafted"] = self.state.get("drafted", 0) + 1
        return {"text": "a draft", "words": 2}

    @listen("keep")
    def store_it(self, result: HumanFeedbackResult):
        return f"kept {result.output['text']} (drafted {self.state['drafted']}x)"


def test_a_human_feedback_steps_body_runs_once_across_the_pause(tmp_path: Path):
    store = tmp_path / "runs.db"
    with pytest.raises(FlowPaused) as caught:
        Counted(store=store).kickoff()
    paused = caught.value
    assert ran == ["draft"]
    assert (
        crew.cli.main(
            [
                "approve",
                paused.run_id[:12],
                paused.call_id,
                "--store",
                str(store),
                "--args",
                json.dumps({"answer": "keep"}),
            ]
        )
        == 0
    )
    # the body's output (and the state it left) was kept with the question: the resume does not run it again
    assert Counted(store=store).resume(paused.run_id) == "kept a draft (drafted 1x)"
    assert ran == ["draft"]


class TwoQuestions(Flow):
    @start()
    def book(self):
        ran.append("book")
        where = self.ask("Where?")
        ran.append(f"asked where: {where}")
        when = self.ask("When?")
        return f"{where} in {when}"


def test_ask_in_the_middle_of_a_step_reruns_it_with_each_recorded_answer(tmp_path: Path):
    """As LangGraph's interrupt(): the step runs again from its start, each ask() returning its answer."""
    store = tmp_path / "runs.db"
    answers = iter(["Porto", "May"])
    run_id = None
    for _ in range(2):
        with pytest.raises(FlowPaused) as caught:
            flow = TwoQuestions(store=store)
            flow.kickoff() if run_id is None else flow.resume(run_id)
        run_id, call = caught.value.run_id, caught.value.call_id
        argv = ["approve", run_id[:12], call, "--store", str(store), "--args", json.dumps({"answer": next(answers)})]
        assert crew.cli.main(argv) == 0
    assert TwoQuestions(store=store).resume(run_id) == "Porto in May"
    assert ran == ["book", "book", "asked where: Porto", "book", "asked where: Porto"]
