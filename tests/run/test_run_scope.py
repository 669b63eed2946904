"""The run scope: one ledger entry per model call, every figure a sum over the ledger, and the
one door (``Meter.call``) where hooks see, stop or stream every call of a run."""

import pytest

from crew import Agent, Crew, Task
from crew.agent.delegation import DELEGATE_WORK
from crew.agent.meter import Meter, UsageLedger, active_account
from crew.agent.scope import RunScope
from crew.common.usage import Usage
from crew.errors import RunStopped
from crew.models import LLMResponse, ModelCallInfo, current_call
from crew.run.kickoff import CrewRun
from crew.testing import FunctionModel, TestModel
from crew.tools import tool
from crew.tools.messages import ToolCall


def billed(tokens, text=None, calls=None):
    return LLMResponse(
        content=text, tool_calls=calls or [], usage=Usage(prompt_tokens=tokens, total_tokens=tokens, requests=1)
    )


@tool
def note(text: str) -> str:
    """Write a note."""
    return "noted"


def test_the_ledger_keeps_running_totals_per_task_agent_and_model():
    ledger = UsageLedger()
    ledger.add("a", "X", "m1", Usage(total_tokens=3, requests=1, cost=0.5))
    ledger.add("a", "Y", "m2", Usage(total_tokens=4, requests=1))
    ledger.add("b", "X", "m1", Usage(total_tokens=5, requests=1))
    assert (ledger.total_tokens, ledger.requests, ledger.cost, len(ledger)) == (12, 3, 0.5, 3)
    assert ledger.for_task("a") == Usage(total_tokens=7, requests=2, cost=0.5) and ledger.for_task("z") == Usage()
    assert {k: u.total_tokens for k, u in ledger.by_agent().items()} == {"X": 8, "Y": 4}
    assert {k: u.total_tokens for k, u in ledger.by_model().items()} == {"m1": 8, "m2": 4}
    assert [e.task for e in ledger.entries] == ["a", "a", "b"]


def test_delegated_work_is_one_entry_per_call_credited_to_the_coworker_under_the_task():
    def lead(messages, tools):
        if messages[-1]["role"] == "tool":
            return billed(20, "summed up")
        return billed(10, calls=[ToolCall(name=DELEGATE_WORK, args={"task": "dig", "context": "", "coworker": "Aide"})])

    def aide(messages, tools):
        if messages[-1]["role"] == "tool":
            return billed(2, "dug")
        return billed(1, calls=[ToolCall(name="note", args={"text": "x"})])

    boss = Agent(role="Lead", goal="g", llm=FunctionModel(lead, model="m-lead"), allow_delegation=True)
    helper = Agent(role="Aide", goal="g", llm=FunctionModel(aide, model="m-aide"), tools=[note])
    crew = Crew(agents=[boss, helper], tasks=[Task(name="job", description="do it", agent=boss)])
    run = CrewRun(crew, {}, run_id="run-ledger")
    import asyncio

    out = asyncio.run(run.execute())

    entries = [(e.task, e.agent, e.model, e.usage.total_tokens) for e in run.scope.meter.ledger.entries]
    assert sorted(entries) == sorted(
        [
            ("job", "Lead", "m-lead", 10),
            ("job", "Aide", "m-aide", 1),
            ("job", "Aide", "m-aide", 2),
            ("job", "Lead", "m-lead", 20),
        ]
    )
    assert out.usage_by_task == {"job": out.usage} and out.usage.total_tokens == 33
    assert out.usage_by_agent["Aide"].total_tokens == 3 and out.usage_by_agent["Lead"].total_tokens == 30
    assert out.task("job").usage == out.usage  # the task's figure holds what it delegated


async def test_a_before_call_hook_can_stop_a_run_at_its_budget():
    calls = []

    def busy(messages, tools):
        calls.append(len(messages))
        return billed(40, calls=[ToolCall(name="note", args={"text": str(len(calls))})])

    scope = RunScope()

    def budget(info: ModelCallInfo, meter: Meter) -> None:
        if meter.ledger.total_tokens >= 100:  # would start past the budget: refuse before paying
            raise RunStopped(f"token budget of 100 spent before turn {info.turn}")

    scope.meter.before_call(budget)
    agent = Agent(role="Busy", goal="g", llm=FunctionModel(busy), tools=[note])
    with pytest.raises(RunStopped, match="budget of 100 spent before turn 4"):
        await agent.aexecute_task(Task(name="t", description="t"), scope=scope)
    assert len(calls) == 3 and scope.meter.ledger.total_tokens == 120

    scope.stop("the user cancelled")
    with pytest.raises(RunStopped, match="the user cancelled"):
        await Agent(role="R", goal="g", llm="test").aexecute_task(Task(description="x"), scope=scope)


async def test_on_delta_streams_every_call_and_after_call_sees_its_info():
    seen_infos, pieces = [], []
    scope = RunScope(run_id="run-stream")
    remove = scope.meter.on_delta(lambda info, delta: pieces.append((info.task, delta.text)))
    scope.meter.after_call(
        lambda info, response, meter: seen_infos.append((info.agent, info.task, info.turn, info.tools))
    )

    agent = Agent(role="Writer", goal="g", llm=TestModel(final_answer="a fine short answer"), tools=[note])
    out = await agent.aexecute_task(Task(name="w", description="write"), scope=scope)
    assert out.raw == "a fine short answer"
    assert "".join(text for _, text in pieces) == "a fine short answer" and len(pieces) > 1
    assert all(task == "w" for task, _ in pieces)
    assert seen_infos == [("Writer", "w", 1, ("note",)), ("Writer", "w", 2, ("note",))]

    remove()  # no listener: models are called without streaming again
    pieces.clear()
    await agent.aexecute_task(Task(name="w2", description="write"), scope=scope)
    assert pieces == [] and scope.meter.ledger.for_task("w2").requests == 2


def test_function_model_scripts_by_task_and_context_names_not_prompt_text():
    seen = []

    def fn(messages, tools, info):
        seen.append((info.agent, info.task, info.context, info.turn, info.tools, info.run_id))
        assert current_call() is info  # the same facts, for anyone in the call
        return {"research": "facts", "write": f"essay from {', '.join(info.context)}"}[info.task]

    agent = Agent(role="Author", goal="g", llm=FunctionModel(fn), tools=[note])
    research = Task(name="research", description="Research the {topic}", expected_output="facts", agent=agent)
    write = Task(name="write", description="Write", expected_output="essay", agent=agent, context=[research])
    out = Crew(agents=[agent], tasks=[research, write]).kickoff({"topic": "bees"})

    assert out.raw == "essay from research"
    assert [s[:5] for s in seen] == [
        ("Author", "research", (), 1, ("note",)),
        ("Author", "write", ("research",), 1, ("note",)),
    ]
    assert {s[5] for s in seen} == {out.run_id}
    assert current_call() is None and active_account() is None  # nothing leaks out of the run


async def test_a_scope_takes_the_runs_things_and_refuses_them_twice():
    scope = RunScope(run_id="r1", llm=TestModel(final_answer="from the scope's default"))
    out = await Agent(role="R", goal="g").aexecute_task(Task(description="x"), scope=scope)
    assert out.raw == "from the scope's default" and scope.meter.ledger.requests == 1
    with pytest.raises(TypeError, match="with a scope"):
        await Agent(role="R", goal="g").aexecute_task(Task(description="x"), scope=scope, run_id="r2")
