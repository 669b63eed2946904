"""Delegation inside a crew: TestModel managers reach real coworkers, delegated turns reach the
crew's step_callback, and delegated tokens are credited to the coworker and its model in
usage_by_agent / usage_by_model while each task's usage stays its whole cost."""

from crew import Agent, Crew, Task
from crew.agent.delegation import ASK_QUESTION, DELEGATE_WORK
from crew.common.usage import Usage
from crew.models import LLMResponse
from crew.testing import FunctionModel


def billed(text, tokens):
    """A reply with exact usage, so the sums below are checked to the token."""
    return LLMResponse(content=text, usage=Usage(prompt_tokens=tokens, total_tokens=tokens, requests=1))


def coworker(role, tokens, seen):
    def reply(messages, tools):
        seen.append((role, messages[1]["content"]))
        return billed(f"{role} did it", tokens)

    return Agent(role=role, goal="help", llm=FunctionModel(reply, model=f"model-{role.lower()}"))


def assert_accounts_add_up(out):
    assert Usage.total(list(out.usage_by_agent.values())) == out.usage
    assert Usage.total(list(out.usage_by_model.values())) == out.usage
    assert Usage.total(list(out.usage_by_task.values())) == out.usage


def test_a_test_model_manager_delegates_to_real_coworkers():
    seen = []
    researcher, writer = coworker("Researcher", 10, seen), coworker("Writer", 20, seen)
    report = Task(name="report", description="Write a report on bees", expected_output="a report")
    crew = Crew(agents=[researcher, writer], tasks=[report], process="hierarchical", manager_llm="test")
    out = crew.kickoff()

    # TestModel calls each tool once with arguments drawn from its schema: the coworker enum
    # makes both calls land on a real coworker instead of "unknown coworker"
    stats = out.tool_stats.values()
    assert sum(s.calls for s in stats) == 2 and sum(s.errors for s in stats) == 0
    assert len(seen) == 2 and {role for role, _ in seen} <= {"Researcher", "Writer"}
    assert all(role in out.raw for role, _ in seen)  # the manager's answer saw their results
    manager = out.usage_by_agent["Crew Manager"]
    assert manager.requests == 2  # TestModel: one turn of tool calls, one answer
    for role, tokens in (("Researcher", 10), ("Writer", 20)):
        runs = sum(1 for r, _ in seen if r == role)
        if runs:
            assert out.usage_by_agent[role] == Usage(
                prompt_tokens=tokens * runs, total_tokens=tokens * runs, requests=runs
            )
            assert out.usage_by_model[f"model-{role.lower()}"] == out.usage_by_agent[role]
    assert out.usage_by_model["test"] == manager
    assert out.usage.requests == 4 == out.usage_by_task["report"].requests  # the task's whole cost
    assert_accounts_add_up(out)


def test_delegated_turns_reach_the_crew_step_callback_and_usage_moves_to_the_coworker():
    seen, steps = [], []

    def manager(messages, tools):
        if any(m["role"] == "tool" for m in messages):
            return billed("assembled", 100)
        return [
            {"name": DELEGATE_WORK, "args": {"task": "find facts", "context": "bees", "coworker": "researcher"}},
            {"name": ASK_QUESTION, "args": {"question": "a title?", "context": "bees", "coworker": "WRITER"}},
        ]

    researcher, writer = coworker("Researcher", 10, seen), coworker("Writer", 20, seen)
    report = Task(name="report", description="Write a report", expected_output="a report")
    out = Crew(
        agents=[researcher, writer],
        tasks=[report],
        process="hierarchical",
        manager_llm=FunctionModel(manager, model="model-boss"),
        step_callback=steps.append,
    ).kickoff()

    assert out.raw == "assembled"
    by_agent = {step.agent: step for step in steps}
    assert by_agent["Researcher"].task == "report -> Researcher" and by_agent["Researcher"].kind == "final_answer"
    assert by_agent["Writer"].task == "report -> Writer"
    assert [s.agent for s in steps].count("Crew Manager") == 2

    manager_usage = out.usage_by_agent["Crew Manager"]
    assert out.usage_by_agent["Researcher"] == Usage(prompt_tokens=10, total_tokens=10, requests=1)
    assert out.usage_by_agent["Writer"] == Usage(prompt_tokens=20, total_tokens=20, requests=1)
    assert manager_usage.requests == 2 and manager_usage.prompt_tokens >= 100
    assert out.usage_by_model == {
        "model-boss": manager_usage,
        "model-researcher": out.usage_by_agent["Researcher"],
        "model-writer": out.usage_by_agent["Writer"],
    }
    # the task keeps the cost of everything it caused; nothing is counted twice
    coworkers = out.usage_by_agent["Researcher"] + out.usage_by_agent["Writer"]
    assert out.usage_by_task["report"] == manager_usage + coworkers
    assert_accounts_add_up(out)


def test_work_delegated_in_a_failed_attempt_still_counts_once():
    seen, attempts = [], []

    def lead(messages, tools):
        if not any(m["role"] == "tool" for m in messages):
            attempts.append(1)  # each attempt asks for different work, so the texts tell them apart
            return [
                {
                    "name": DELEGATE_WORK,
                    "args": {"task": f"check part {len(attempts)}", "context": "", "coworker": "Checker"},
                }
            ]
        if len(attempts) == 1:
            raise RuntimeError("the lead's model went down")
        return billed("all checked", 100)

    boss = Agent(role="Lead", goal="lead", llm=FunctionModel(lead, model="model-lead"), allow_delegation=True)
    checker = coworker("Checker", 7, seen)
    task = Task(name="check", description="check everything", agent=boss, max_retries=1)
    out = Crew(agents=[boss, checker], tasks=[task]).kickoff()

    assert out.raw == "all checked" and out.tasks_output[0].attempts == 2
    expected = "\n\nExpected output: A complete answer to the task, usable as is."
    assert [text for _, text in seen] == [f"Task: check part {n}{expected}" for n in (1, 2)]
    assert out.usage_by_agent["Checker"] == Usage(prompt_tokens=14, total_tokens=14, requests=2)
    assert out.usage_by_agent["Lead"].requests == 3  # one turn in the failed attempt, two in the second
    assert out.usage.requests == 5 == out.usage_by_task["check"].requests
    assert_accounts_add_up(out)


async def test_concurrent_delegating_tasks_credit_each_coworker_once():
    seen = []

    def lead(messages, tools):
        if any(m["role"] == "tool" for m in messages):
            return billed("ok", 50)
        topic = messages[1]["content"].split()[1]
        return [{"name": DELEGATE_WORK, "args": {"task": f"research {topic}", "context": "", "coworker": "Helper"}}]

    boss = Agent(role="Lead", goal="lead", llm=FunctionModel(lead, latency=0.01), allow_delegation=True)
    helper = coworker("Helper", 3, seen)
    tasks = [Task(name=f"t{i}", description=f"topic{i} now", agent=boss, context=[]) for i in range(12)]
    out = await Crew(agents=[boss, helper], tasks=tasks, process="graph", max_concurrency=12).kickoff_async()

    assert len(seen) == 12
    assert out.usage_by_agent["Helper"] == Usage(prompt_tokens=36, total_tokens=36, requests=12)
    assert out.usage_by_agent["Lead"].requests == 24
    assert all(out.usage_by_task[f"t{i}"].requests == 3 for i in range(12))
    assert_accounts_add_up(out)


def test_delegation_is_never_served_from_the_cache():
    """The same text delegated by two tasks is two pieces of work: the coworker runs twice."""
    seen = []

    def lead(messages, tools):
        if any(m["role"] == "tool" for m in messages):
            return "done"
        return [
            {"name": DELEGATE_WORK, "args": {"task": "same words", "context": "", "coworker": "Helper"}},
            {"name": ASK_QUESTION, "args": {"question": "same?", "context": "", "coworker": "Helper"}},
        ]

    boss = Agent(role="Lead", goal="lead", llm=FunctionModel(lead), allow_delegation=True)
    helper = coworker("Helper", 3, seen)
    tasks = [Task(name=f"t{i}", description=f"task {i}", agent=boss) for i in range(2)]
    out = Crew(agents=[boss, helper], tasks=tasks).kickoff()

    assert len(seen) == 4
    assert {name: (s.runs, s.cache_hits) for name, s in out.tool_stats.items() if s.calls} == {
        "Delegate_work_to_coworker": (2, 0),
        "Ask_question_to_coworker": (2, 0),
    }
    assert all(not call.cached for o in out.tasks_output for call in o.tool_calls)
    assert out.usage_by_agent["Helper"].requests == 4
