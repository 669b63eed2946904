"""What each task sees and what it hands back: context, guardrails, human input, conditions,
output files, callbacks, structured outputs, usage and tool statistics."""

import json

import pytest
from crew_testkit import Recorder, dag
from pydantic import BaseModel

from crew import Agent, Crew, Task
from crew.errors import CrewRunError
from crew.tasks.output import TaskOutput
from crew.testing import FunctionModel, TestModel
from crew.tools import tool


class Summary(BaseModel):
    title: str
    points: list[str]


def test_in_the_graph_process_a_task_sees_only_its_dependencies():
    rec = Recorder()
    agent = rec.agent()
    tasks = dag(agent, {"a": [], "b": [], "c": ["a"], "d": ["c", "b"]})
    Crew(agents=[agent], tasks=tasks, process="graph").kickoff()
    assert rec.call("a").context == [] and rec.call("c").context == ["a"]
    assert rec.call("d").context == ["c", "b"]  # in the order its context lists them


def test_in_the_sequential_process_a_task_sees_all_earlier_outputs_unless_given_a_context():
    rec = Recorder()
    agent = rec.agent()
    a = Task(name="a", description="a", agent=agent)
    b = Task(name="b", description="b", agent=agent)
    c = Task(name="c", description="c", agent=agent)
    only_a = Task(name="only_a", description="only_a", agent=agent, context=[a])
    out = Crew(agents=[agent], tasks=[a, b, c, only_a]).kickoff()
    assert [rec.call(n).context for n in ("a", "b", "c", "only_a")] == [[], ["a"], ["a", "b"], ["a"]]
    assert rec.tasks_called() == ["a", "b", "c", "only_a"]
    assert out.raw == "output of only_a"


def test_the_context_carries_the_dependencies_raw_outputs():
    def reply(messages, tools):
        user = messages[1]["content"]
        return "42" if "Task: count" in user else f"saw: {user.split('## count')[1].strip()}"

    agent = Agent(role="w", goal="g", llm=FunctionModel(reply))
    count = Task(name="count", description="count", agent=agent)
    report = Task(name="report", description="report", agent=agent, context=[count])
    assert Crew(agents=[agent], tasks=[count, report], process="graph").kickoff().raw == "saw: 42"


def test_a_guardrail_rejection_goes_back_to_the_agent_as_feedback_until_accepted():
    answers = iter(["too short", "still short", "a long enough answer"])
    rec = Recorder(reply=lambda task, messages: next(answers))
    agent = rec.agent()
    verdicts = []

    def long_enough(out: TaskOutput):
        verdicts.append(out.raw)
        ok = len(out.raw) > 15
        return (True, out.raw.upper()) if ok else (False, f"'{out.raw}' is under 15 characters")

    task = Task(name="t", description="t", agent=agent, guardrail=long_enough, guardrail_max_retries=2)
    out = Crew(agents=[agent], tasks=[task]).kickoff()
    assert verdicts == ["too short", "still short", "a long enough answer"]
    assert [c.feedback for c in rec.calls] == [
        None,
        "'too short' is under 15 characters",
        "'still short' is under 15 characters",
    ]
    assert [c.previous for c in rec.calls] == [None, "too short", "still short"]  # quoted beside it
    assert out.raw == "A LONG ENOUGH ANSWER"  # (True, value) replaced the output
    assert out.task("t").usage.requests == 3  # every attempt's tokens are counted


async def test_a_guardrail_that_keeps_rejecting_fails_the_task_after_its_retries():
    rec = Recorder()
    agent = rec.agent()

    async def never(out):
        return (False, "no")

    task = Task(name="t", description="t", agent=agent, guardrail=never, guardrail_max_retries=1)
    with pytest.raises(CrewRunError, match="guardrail rejected the output of task 't' 2 times; last feedback: no"):
        await Crew(agents=[agent], tasks=[task]).kickoff_async()
    assert len(rec.calls) == 2


def test_a_guardrail_must_return_a_pair():
    rec = Recorder()
    agent = rec.agent()
    task = Task(name="t", description="t", agent=agent, guardrail=lambda out: True)
    with pytest.raises(CrewRunError, match=r"must return \(bool, value\), got bool"):
        Crew(agents=[agent], tasks=[task]).kickoff()


def test_human_input_feedback_reruns_the_task_and_an_empty_answer_accepts():
    rec = Recorder(reply=lambda task, messages: f"draft {len(rec.calls)}")
    agent = rec.agent()
    reviews = iter(["add a title", ""])
    shown = []

    def person(out):
        shown.append(out.raw)
        return next(reviews)

    task = Task(name="t", description="t", agent=agent, human_input=True)
    out = Crew(agents=[agent], tasks=[task], human_feedback=person).kickoff()
    assert shown == ["draft 1", "draft 2"] and out.raw == "draft 2"
    assert rec.calls[1].feedback == "add a title" and rec.calls[1].previous == "draft 1"


def test_on_a_terminal_the_human_input_prompt_goes_to_stderr(monkeypatch, capsys):
    """With stdout redirected (`> out.md`) a prompt on stdout would vanish and the run would seem to hang."""
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Terminal("be shorter\n\n"))
    rec = Recorder(reply=lambda task, messages: f"draft {len(rec.calls)}")
    agent = rec.agent()
    out = Crew(agents=[agent], tasks=[Task(name="t", description="t", agent=agent, human_input=True)]).kickoff()
    assert out.raw == "draft 2" and rec.calls[1].feedback == "be shorter"
    printed = capsys.readouterr()
    assert printed.err.count("Feedback for the agent (empty line accepts): ") == 2 and "draft 1" in printed.err
    assert printed.out == ""


def test_human_input_without_a_terminal_accepts_the_output(monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    rec = Recorder()
    agent = rec.agent()
    out = Crew(agents=[agent], tasks=[Task(name="t", description="t", agent=agent, human_input=True)]).kickoff()
    assert out.raw == "output of t" and len(rec.calls) == 1


def test_a_false_condition_skips_the_task_and_its_dependants_still_run():
    rec = Recorder(reply=lambda task, messages: "no data" if task == "fetch" else f"output of {task}")
    agent = rec.agent()
    fetch = Task(name="fetch", description="fetch", agent=agent)
    seen = []

    def has_data(outputs):
        seen.append([o.name for o in outputs])
        return "no data" not in outputs[0].raw

    analyse = Task(name="analyse", description="analyse", agent=agent, context=[fetch], condition=has_data)
    report = Task(name="report", description="report", agent=agent, context=[fetch, analyse])
    out = Crew(agents=[agent], tasks=[fetch, analyse, report], process="graph").kickoff()
    assert seen == [["fetch"]]
    assert out.task("analyse").status == "skipped" and out.task("analyse").error == "condition is false"
    assert rec.tasks_called() == ["fetch", "report"] and rec.call("report").context == ["fetch"]
    assert out.raw == "output of report"


def test_output_files_hold_exactly_the_raw_output_or_json_in_created_directories(tmp_path):
    agent = Agent(role="w", goal="g", llm=TestModel(final_answer="line one\nline two\n"))
    structured = Agent(role="s", goal="g", llm=TestModel(final_answer={"title": "T", "points": ["p"]}))
    tasks = [
        Task(name="text", description="t", agent=agent, output_file=str(tmp_path / "a" / "b" / "{name}.md")),
        Task(
            name="model",
            description="m",
            agent=structured,
            output_pydantic=Summary,
            output_file=str(tmp_path / "{name}.json"),
        ),
        Task(
            name="json",
            description="j",
            agent=structured,
            output_json=Summary,
            output_file=str(tmp_path / "j" / "out.json"),
        ),
    ]
    out = Crew(agents=[agent, structured], tasks=tasks).kickoff({"name": "report"})
    assert (tmp_path / "a" / "b" / "report.md").read_text() == "line one\nline two\n"
    assert json.loads((tmp_path / "report.json").read_text()) == {"title": "T", "points": ["p"]}
    assert json.loads((tmp_path / "j" / "out.json").read_text()) == {"title": "T", "points": ["p"]}
    assert out.json_dict == {"title": "T", "points": ["p"]}
    assert out.task("model").pydantic == Summary(title="T", points=["p"])


def test_an_unwritable_output_file_fails_the_task_naming_the_path(tmp_path):
    (tmp_path / "blocker").write_text("a file, not a directory")
    rec = Recorder()
    agent = rec.agent()
    task = Task(name="t", description="t", agent=agent, output_file=str(tmp_path / "blocker" / "out.md"))
    with pytest.raises(CrewRunError, match=r"cannot write output_file '.*blocker/out.md' of task 't'"):
        Crew(agents=[agent], tasks=[task]).kickoff()


def test_callbacks_see_each_finished_output():
    rec = Recorder()
    agent = rec.agent()
    per_task, crew_wide = [], []

    async def crew_callback(out):
        crew_wide.append(out.name)

    tasks = dag(agent, {"a": [], "b": ["a"]}, callback=lambda out: per_task.append((out.name, out.raw)))
    Crew(agents=[agent], tasks=tasks, task_callback=crew_callback).kickoff()
    assert per_task == [("a", "output of a"), ("b", "output of b")] and crew_wide == ["a", "b"]


def test_the_final_output_is_structured_when_the_last_task_is():
    agent = Agent(role="w", goal="g", llm="test")
    out = Crew(agents=[agent], tasks=[Task(description="d", agent=agent, output_pydantic=Summary)]).kickoff()
    assert isinstance(out.pydantic, Summary) and out.to_dict() == out.pydantic.model_dump()
    assert json.loads(str(out)) == out.pydantic.model_dump()


def test_usage_is_reported_in_total_and_per_task_agent_and_model():
    fast = Recorder()
    writer = Agent(role="Writer", goal="g", llm=FunctionModel(fast, model="model-w"))
    checker = Agent(role="Checker", goal="g", llm=FunctionModel(fast, model="model-c"))
    tasks = [
        Task(name="w1", description="w1", agent=writer),
        Task(name="w2", description="w2", agent=writer),
        Task(name="c1", description="c1", agent=checker),
    ]
    out = Crew(agents=[writer, checker], tasks=tasks).kickoff()
    per_task = out.usage_by_task
    assert set(per_task) == {"w1", "w2", "c1"} and all(
        u.requests == 1 and u.total_tokens > 0 for u in per_task.values()
    )
    assert out.usage.total_tokens == sum(u.total_tokens for u in per_task.values())
    assert out.usage_by_agent["Writer"] == per_task["w1"] + per_task["w2"]
    assert out.usage_by_model == {"model-w": out.usage_by_agent["Writer"], "model-c": per_task["c1"]}
    assert out.token_usage == out.usage


def test_one_executor_per_kickoff_is_shared_by_all_agents():
    runs = []

    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        runs.append(city)
        return f"{city}: sunny"

    @tool(max_usage_count=1, cache_function=lambda args, result: False)
    def once() -> str:
        """Usable once per run."""
        return "used"

    def caller(messages, tools):
        if any(m["role"] == "tool" for m in messages):
            return "done"
        return [{"name": "lookup", "args": {"city": "Oslo"}}, {"name": "once", "args": {}}]

    a = Agent(role="A", goal="g", llm=FunctionModel(caller), tools=[lookup, once])
    b = Agent(role="B", goal="g", llm=FunctionModel(caller), tools=[lookup, once])
    crew = Crew(agents=[a, b], tasks=[Task(description="x", agent=a), Task(description="y", agent=b)])
    for _ in range(2):  # a second kickoff starts with a fresh cache and fresh usage counts
        out = crew.kickoff()
        stats = out.tool_stats
        assert (stats["lookup"].calls, stats["lookup"].runs, stats["lookup"].cache_hits) == (2, 1, 1)
        assert (stats["once"].calls, stats["once"].runs, stats["once"].refused) == (2, 1, 1)
    assert runs == ["Oslo", "Oslo"]
    assert [r.name for r in out.tasks_output[0].tool_calls] == ["lookup", "once"]


def test_a_tasks_tools_replace_the_agents_tools_for_that_task_only():
    @tool
    def own(q: str) -> str:
        """The agent's own tool."""
        return "own result"

    @tool
    def special(q: str) -> str:
        """A tool for one task only."""
        return "special result"

    offered = {}

    def reply(messages, tools):
        task = messages[1]["content"].split()[1]
        offered.setdefault(task, ([t["function"]["name"] for t in tools], messages[0]["content"]))
        if messages[-1]["role"] == "tool":
            return f"{task}: {messages[-1]['content']}"
        return [{"name": "own", "args": {"q": "x"}}]  # always tries the agent's own tool

    agent = Agent(role="A", goal="g", llm=FunctionModel(reply), tools=[own])
    tasks = [
        Task(name="narrow", description="narrow", agent=agent, tools=[special]),
        Task(name="usual", description="usual", agent=agent),
    ]
    out = Crew(agents=[agent], tasks=tasks).kickoff()
    assert offered["narrow"][0] == ["special"] and offered["usual"][0] == ["own"]
    assert "special" in offered["narrow"][1] and "own" not in offered["narrow"][1]  # nor in its prompt
    assert out.task("narrow").raw == "narrow: Unknown tool 'own'. Available tools: special."
    assert out.task("usual").raw == "usual: own result"
    assert [c.status for c in out.task("narrow").tool_calls] == ["error"]
    assert agent.tools == [own] and tasks[1].tools is None  # declarations untouched


def test_cache_false_turns_the_crew_wide_tool_cache_off():
    runs = []

    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        runs.append(city)
        return f"{city}: sunny"

    def caller(messages, tools):
        return "done" if messages[-1]["role"] == "tool" else [{"name": "lookup", "args": {"city": "Oslo"}}]

    agent = Agent(role="A", goal="g", llm=FunctionModel(caller), tools=[lookup])
    tasks = [Task(description="x", agent=agent), Task(description="y", agent=agent)]
    cached = Crew(agents=[agent], tasks=tasks).kickoff().tool_stats["lookup"]
    uncached = Crew(agents=[agent], tasks=tasks, cache=False).kickoff().tool_stats["lookup"]
    assert (cached.calls, cached.runs, cached.cache_hits) == (2, 1, 1)
    assert (uncached.calls, uncached.runs, uncached.cache_hits) == (2, 2, 0)
    assert runs == ["Oslo"] * 3


def test_task_outputs_carry_every_field_and_only_done_tasks_have_raw():
    @tool
    def measure(text: str) -> int:
        """Count characters."""
        return len(text)

    def reply(messages, tools):
        user = messages[1]["content"]
        if "Task: broken" in user:
            raise RuntimeError("model down")
        if messages[-1]["role"] == "tool":
            return "measured " + messages[-1]["content"]
        return [{"name": "measure", "args": {"text": "abcd"}}]

    agent = Agent(role="Measurer", goal="g", llm=FunctionModel(reply, model="model-m"), tools=[measure])
    tasks = [
        Task(name="ok", description="ok", expected_output="a number", agent=agent),
        Task(name="broken", description="broken", agent=agent),
        Task(name="after", description="after", agent=agent, context=["broken"]),
    ]
    out = Crew(agents=[agent], tasks=tasks, process="graph", on_error="continue").kickoff()
    done, failed, skipped = out.tasks_output
    assert (done.name, done.status, done.raw, done.agent, done.model) == (
        "ok",
        "done",
        "measured 4",
        "Measurer",
        "model-m",
    )
    assert (done.description, done.expected_output, done.error, done.attempts) == ("ok", "a number", None, 1)
    assert (done.pydantic, done.json_dict) == (None, None)
    assert done.usage.requests == 2 and done.usage.total_tokens > 0
    assert done.started_at <= done.finished_at and done.duration == done.finished_at - done.started_at
    assert [(c.name, c.args, c.status, c.cached) for c in done.tool_calls] == [
        ("measure", {"text": "abcd"}, "success", False)
    ]
    assert (failed.status, failed.raw, failed.agent) == ("failed", "", "Measurer")
    assert "RuntimeError: model down" in failed.error
    assert (skipped.status, skipped.raw, skipped.attempts) == ("skipped", "", 0)
    assert out.raw == "measured 4"  # the last declared task that is done


def test_a_guardrail_accepting_with_none_keeps_the_output_and_a_model_replaces_it():
    agent = Agent(role="w", goal="g", llm=FunctionModel(lambda m, t: "kept as is"))
    keep = Task(name="keep", description="keep", agent=agent, guardrail=lambda out: (True, None))
    swap = Task(
        name="swap", description="swap", agent=agent, guardrail=lambda out: (True, Summary(title=out.raw, points=[]))
    )
    out = Crew(agents=[agent], tasks=[keep, swap]).kickoff()
    assert out.task("keep").raw == "kept as is" and out.task("keep").pydantic is None
    assert out.task("swap").pydantic == Summary(title="kept as is", points=[])
    assert out.pydantic == out.task("swap").pydantic and json.loads(out.raw)["title"] == "kept as is"


def test_a_guardrails_replacement_of_a_structured_output_is_checked_against_its_model():
    """``(True, "not json")`` left ``raw="not json"`` beside the old ``pydantic``; a dict left ``pydantic=None``."""
    agent = Agent(role="w", goal="g", llm=FunctionModel(lambda m, t: '{"title": "first", "points": []}'))

    def task(name, replacement, **fields):
        return Task(name=name, description=name, agent=agent, guardrail=lambda out: (True, replacement), **fields)

    tasks = [
        task("as_dict", {"title": "second", "points": ["a"]}, output_pydantic=Summary),
        task("as_text", '{"title": "third", "points": []}', output_json=Summary),
        task("misfit", "not json", output_pydantic=Summary),
    ]
    out = Crew(agents=[agent], tasks=tasks, process="graph", on_error="continue").kickoff()
    as_dict, as_text, misfit = out.tasks_output
    assert as_dict.pydantic == Summary(title="second", points=["a"]) and json.loads(as_dict.raw)["title"] == "second"
    assert as_text.json_dict == {"title": "third", "points": []} and as_text.pydantic is None
    assert misfit.status == "failed" and "does not fit output_pydantic=Summary" in (misfit.error or "")


def test_an_async_condition_works_and_a_raising_condition_fails_its_task():
    rec = Recorder()
    agent = rec.agent()

    async def never(outputs):
        return False

    def broken(outputs):
        raise KeyError("no such field")

    tasks = [
        Task(name="first", description="first", agent=agent),
        Task(name="skipped", description="skipped", agent=agent, condition=never),
        Task(name="broken", description="broken", agent=agent, condition=broken),
    ]
    out = Crew(agents=[agent], tasks=tasks, on_error="continue").kickoff()
    assert [o.status for o in out.tasks_output] == ["done", "skipped", "failed"]
    assert out.task("broken").error == "KeyError: 'no such field'"
    assert rec.tasks_called() == ["first"]
