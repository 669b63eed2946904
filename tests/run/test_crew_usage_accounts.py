"""Every token a run paid for is in its CrewOutput: failed tasks, tasks cancelled by
on_error="stop", and coworkers whose run raised are counted per task, agent and model,
and the three breakdowns add up to the total."""

import asyncio

import pytest

from crew import Agent, Crew, Task
from crew.agent.delegation import DELEGATE_WORK
from crew.common.usage import Usage
from crew.errors import CrewRunError
from crew.models import LLMResponse
from crew.testing import FunctionModel
from crew.tools import tool
from crew.tools.messages import ToolCall


def billed(tokens, text=None, calls=None):
    usage = Usage(prompt_tokens=tokens, total_tokens=tokens, requests=1)
    return LLMResponse(content=text, tool_calls=calls or [], usage=usage)


@tool
def note(text: str) -> str:
    """Write a note."""
    return "noted"


def assert_accounts_add_up(out):
    for breakdown in (out.usage_by_agent, out.usage_by_model, out.usage_by_task):
        assert Usage.total(list(breakdown.values())) == out.usage


def test_a_failed_task_is_counted_under_its_agent_and_model():
    def flaky(messages, tools):
        if messages[-1]["role"] != "tool":
            return billed(11, calls=[ToolCall(name="note", args={"text": "x"})])
        raise RuntimeError("model went away")

    agent = Agent(role="Writer", goal="write", llm=FunctionModel(flaky, model="model-w"), tools=[note])
    task = Task(name="draft", description="draft it", agent=agent, max_retries=1)
    out = Crew(agents=[agent], tasks=[task], on_error="continue").kickoff()

    failed = out.task("draft")
    assert failed.status == "failed" and failed.attempts == 2 and failed.model == "model-w"
    assert out.usage == Usage(prompt_tokens=22, total_tokens=22, requests=2)  # one billed turn per attempt
    assert out.usage_by_model == {"model-w": out.usage} and out.usage_by_agent == {"Writer": out.usage}
    assert_accounts_add_up(out)


async def test_a_task_cancelled_by_stop_keeps_what_it_spent():
    started = asyncio.Event()

    async def slow(messages, tools):
        if messages[-1]["role"] != "tool":
            return billed(5, calls=[ToolCall(name="note", args={"text": "y"})])
        started.set()
        await asyncio.sleep(30)  # cancelled long before
        return billed(1, "never")

    async def bad(messages, tools):
        await started.wait()
        raise RuntimeError("boom")

    slow_agent = Agent(role="Slow", goal="g", llm=FunctionModel(slow, model="model-s"), tools=[note])
    bad_agent = Agent(role="Bad", goal="g", llm=FunctionModel(bad, model="model-b"))
    tasks = [
        Task(name="long", description="long", agent=slow_agent),
        Task(name="breaks", description="breaks", agent=bad_agent),
    ]
    crew = Crew(agents=[slow_agent, bad_agent], tasks=tasks, process="graph")
    with pytest.raises(CrewRunError) as caught:
        await asyncio.wait_for(crew.kickoff_async(), 5)

    out = caught.value.output
    long = out.task("long")
    assert long.status == "skipped" and "cancelled" in long.error and long.started_at is not None
    assert long.usage == Usage(prompt_tokens=5, total_tokens=5, requests=1) and long.model == "model-s"
    assert out.usage_by_agent["Slow"] == long.usage == out.usage_by_model["model-s"]
    assert out.usage == long.usage  # the failed task's only model call raised: nothing billed
    assert_accounts_add_up(out)


def test_a_coworker_whose_run_raises_still_bills_its_turns():
    def helper(messages, tools):
        if messages[-1]["role"] != "tool":
            return billed(7, calls=[ToolCall(name="note", args={"text": "z"})])
        raise RuntimeError("helper's model is down")

    seen = []

    def lead(messages, tools):
        results = [m["content"] for m in messages if m["role"] == "tool"]
        if results:
            seen.extend(results)
            return billed(100, "managed without help")
        return billed(
            50, calls=[ToolCall(name=DELEGATE_WORK, args={"task": "help", "context": "", "coworker": "Helper"})]
        )

    boss = Agent(role="Lead", goal="lead", llm=FunctionModel(lead, model="model-lead"), allow_delegation=True)
    aide = Agent(role="Helper", goal="help", llm=FunctionModel(helper, model="model-help"), tools=[note])
    out = Crew(agents=[boss, aide], tasks=[Task(name="job", description="do it", agent=boss)]).kickoff()

    assert out.raw == "managed without help"
    assert seen == ["DelegationError: Helper could not finish: RuntimeError: helper's model is down"]
    assert out.tool_stats["Delegate_work_to_coworker"].errors == 1
    assert out.usage_by_agent["Helper"] == Usage(prompt_tokens=7, total_tokens=7, requests=1)
    assert out.usage_by_model["model-help"] == out.usage_by_agent["Helper"]
    assert out.usage_by_agent["Lead"] == Usage(prompt_tokens=150, total_tokens=150, requests=2)
    assert out.usage_by_task["job"] == out.usage == Usage(prompt_tokens=157, total_tokens=157, requests=3)
    assert_accounts_add_up(out)


def test_an_agent_that_never_answers_still_bills_every_call():
    def busy(messages, tools):
        if tools:
            return billed(3, calls=[ToolCall(name="note", args={"text": "again"})])
        return billed(4, "")  # asked for its best answer without tools: says nothing

    agent = Agent(role="Busy", goal="g", llm=FunctionModel(busy, model="model-b"), tools=[note], max_iter=2)
    out = Crew(agents=[agent], tasks=[Task(name="t", description="t", agent=agent)], on_error="continue").kickoff()
    failed = out.task("t")
    assert failed.status == "failed" and "gave no final answer" in failed.error
    assert failed.usage == Usage(prompt_tokens=10, total_tokens=10, requests=3) == out.usage_by_model["model-b"]
    assert_accounts_add_up(out)
