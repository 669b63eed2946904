"""Budgets of a whole flow run: every crew its steps kick off spends one ``max_tokens``/``max_cost``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flow_project_kit import crew, write

from crew import Agent, Crew, Task
from crew.common.usage import Usage
from crew.errors import BudgetExceededError, FlowBudgetExceededError, FlowDefinitionError
from crew.flow import Flow, listen, start
from crew.models.base import LLMResponse
from crew.store import RunStore
from crew.testing import FunctionModel

calls: list[str] = []


def _priced(messages: Any, tools: Any, info: Any) -> LLMResponse:
    calls.append(info.task)
    return LLMResponse(content=f"{info.task} ok", usage=Usage(total_tokens=100, requests=1, cost=0.01))


def _crew(*tasks: str) -> Crew:
    agent = Agent(role="Writer", goal="write", backstory="writes", llm=FunctionModel(_priced))
    return Crew(
        agents=[agent], tasks=[Task(name=t, description=t, expected_output="a line", agent=agent) for t in tasks]
    )


class Pair(Flow):
    @start()
    def first(self):
        return _crew("one").kickoff().raw

    @listen(first)
    async def second(self, text):
        return (await _crew("two", "three").kickoff_async()).raw


@pytest.fixture(autouse=True)
def _fresh() -> None:
    calls.clear()


def test_the_crews_of_all_steps_spend_one_budget_and_a_resume_goes_on(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    # each crew alone stays under 150 tokens; together they pass it at the flow's third call
    with pytest.raises(FlowBudgetExceededError) as caught:
        Pair(store=store, max_tokens=150).kickoff()
    error = caught.value
    assert isinstance(error, BudgetExceededError)  # the error a crew's budget gives
    assert calls == ["one", "two"]  # 'three' never started
    assert (error.budget, error.limit, error.step, error.spent.total_tokens) == ("max_tokens", 150, "second", 200)
    assert "budget max_tokens=150 tokens reached before a model call of agent 'Writer' for task 'three' in step " in (
        str(error)
    )
    assert "the flow run has spent 200 tokens ($0.0200)" in str(error)
    db = RunStore(store)
    stopped = db.run(error.run_id)
    assert stopped.status == "failed" and stopped.settings["max_tokens"] == 150
    assert [(s.step, s.status) for s in db.steps(stopped.id)] == [("first", "done"), ("second", "failed")]
    assert stopped.usage.total_tokens == 200

    # the budget holds on a resume and covers the run it continues: the first call is refused
    with pytest.raises(FlowBudgetExceededError, match=r"of which 200 tokens \(\$0\.0200\) were spent by run"):
        Pair(store=store).resume(stopped.id)
    assert calls == ["one", "two"]
    calls.clear()
    assert Pair(store=store, max_tokens=10_000, max_cost=1.0).resume(stopped.id) == "three ok"  # raised
    assert calls == ["two", "three"]  # 'first' is handed on; the failed step runs again


def test_budgets_are_checked_as_a_crews_are() -> None:
    with pytest.raises(FlowDefinitionError, match="max_tokens must be a positive int, not 0"):
        Pair(max_tokens=0)
    with pytest.raises(FlowDefinitionError, match="max_cost must be a positive number"):
        Pair(max_cost=-1.0)
    assert Pair().kickoff() == "three ok"  # no budget: nothing is refused


_FLOW = """
from pathlib import Path

from crew.config import load_crew
from crew.flow import Flow, listen, start

HERE = Path(__file__).resolve().parent


class Twice(Flow):
    @start()
    def first(self):
        return load_crew(HERE / "summary").kickoff({"topic": "rivers"}).raw

    @listen(first)
    def second(self, text):
        return "twice: " + load_crew(HERE / "summary").kickoff({"topic": "lakes"}).raw[:20]
"""

_CREW = """
name: summary
llm: openai/gpt-4o-mini
agents:
  summariser:
    role: Summariser
    goal: Summarise {topic}
    backstory: Plain words.
tasks:
  summarise:
    description: Summarise {topic}
    expected_output: One line.
    agent: summariser
"""


def test_cli_budget_stops_the_flow_and_resume_keeps_the_runs_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = write(tmp_path / "twice", {"flow.py": _FLOW, "summary/crew.yaml": _CREW})
    store = str(tmp_path / "runs.db")
    assert crew(capsys, "kickoff", str(folder), "--max-tokens", "0", "--store", store)[0] == 2
    code, out, err = crew(capsys, "kickoff", str(folder), "--llm", "test", "--max-tokens", "1", "--store", store, "-q")
    assert code == 1, err
    assert "crew: budget max_tokens=1 tokens reached before a model call of agent 'Summariser'" in err
    assert "in step 'second'" in err
    db = RunStore(store)
    first = next(r for r in db.runs() if r.kind == "flow")
    assert first.status == "failed" and first.settings["cli"]["llm"] == "test"
    # no --llm: the run's own (the crew file says openai/gpt-4o-mini, with no key here); its budget holds
    code, _, err = crew(capsys, "resume", first.id[:12], "--store", store, "-q")
    assert code == 1 and "budget max_tokens=1 tokens" in err
    again = next(r for r in db.runs() if r.kind == "flow" and r.continued_from == first.id)
    assert again.settings["cli"]["llm"] == "test"  # kept for the next resume too
    code, out, err = crew(capsys, "resume", again.id[:12], "--store", store, "--max-tokens", "100000", "--json")
    assert code == 0, err
    assert json.loads(out)["output"].startswith("twice: ")
    done = next(r for r in db.runs() if r.kind == "flow" and r.continued_from == again.id)
    assert done.status == "done"
    (child,) = db.children(done.id)  # only 'second' ran: 'first' was handed on
    assert {c.model for c in db.detail(child.id).model_calls} == {"test"}  # the kickoff's --llm, not the file's
