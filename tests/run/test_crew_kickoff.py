"""Kickoff entry points: sync, async, inside a running loop, for each input; reuse and isolation;
crew-wide defaults (llm, max_rpm, step_callback); the hierarchical process; litellm prewarm."""

import asyncio
import subprocess
import sys
import textwrap
import threading

import pytest
from crew_testkit import Recorder, dag

from crew import Agent, Crew, Task
from crew.errors import ConfigError, CrewRunError, MissingInputError
from crew.testing import FunctionModel
from crew.tools import tool


def topic_crew(rec: Recorder) -> Crew:
    agent = rec.agent()
    return Crew(agents=[agent], tasks=[Task(description="{topic}", expected_output="text", agent=agent)])


def test_a_crew_is_reusable_and_kickoffs_share_no_usage_or_outputs():
    rec = Recorder()
    crew = topic_crew(rec)
    first = crew.kickoff({"topic": "alpha"})
    second = crew.kickoff({"topic": "beta"})
    assert (first.raw, second.raw) == ("output of alpha", "output of beta")
    assert first.run_id != second.run_id
    assert first.usage.requests == second.usage.requests == 1
    assert [o.name for o in second.tasks_output] == ["task_1"]


async def test_two_crews_and_two_kickoffs_run_at_once_without_interfering():
    rec_a, rec_b = Recorder(latency=0.1), Recorder(latency=0.1)
    crew_a, crew_b = topic_crew(rec_a), topic_crew(rec_b)
    outs = await asyncio.gather(
        crew_a.kickoff_async({"topic": "a1"}),
        crew_b.kickoff_async({"topic": "b1"}),
        crew_a.kickoff_async({"topic": "a2"}),
    )
    assert [o.raw for o in outs] == ["output of a1", "output of b1", "output of a2"]
    assert len({o.run_id for o in outs}) == 3 and all(o.usage.requests == 1 for o in outs)
    assert sorted(rec_a.tasks_called()) == ["a1", "a2"] and rec_b.tasks_called() == ["b1"]
    assert rec_a.peak == 2  # both kickoffs of crew_a were in flight together


def test_kickoff_for_each_returns_results_in_input_order_with_bounded_concurrency():
    rec = Recorder(durations={"t0": 0.15, "t1": 0.1, "t2": 0.05, "t3": 0.0, "t4": 0.0})
    crew = topic_crew(rec)
    outs = crew.kickoff_for_each([{"topic": f"t{i}"} for i in range(5)], concurrency=3)
    assert [o.raw for o in outs] == [f"output of t{i}" for i in range(5)]
    assert rec.peak == 3
    assert rec.tasks_called()[:3] != ["t0", "t1", "t2"]  # they finished in another order


async def test_kickoff_for_each_async_raises_the_first_failure_with_its_index():
    rec = Recorder(latency=0.01, fail={"bad": 1})
    crew = topic_crew(rec)
    assert await crew.kickoff_for_each_async([]) == []
    with pytest.raises(CrewRunError) as info:
        await crew.kickoff_for_each_async([{"topic": "ok"}, {"topic": "bad"}], concurrency=2)
    assert info.value.index == 1 and info.value.task == "task_1"


def test_kickoff_for_each_checks_every_input_before_any_kickoff_starts():
    rec = Recorder()
    crew = topic_crew(rec)
    with pytest.raises(MissingInputError, match=r"missing input 'topic' for \{topic\} in task 'task_1'") as info:
        crew.kickoff_for_each([{"topic": "fine"}, {"topic": "also fine"}, {"subject": "oops"}])
    assert info.value.index == 2 and rec.calls == []  # nothing ran, not even the good ones
    with pytest.raises(TypeError, match=r"a list of inputs mappings, one per kickoff; .* call kickoff\(inputs\)"):
        crew.kickoff_for_each({"topic": "one"})
    with pytest.raises(TypeError, match=r"inputs must be a mapping .* got str") as info:
        crew.kickoff_for_each([{"topic": "a"}, "topic=b"])
    assert info.value.index == 1
    with pytest.raises(TypeError, match=r"inputs must be a mapping of placeholder names to values.*got list"):
        crew.kickoff(["topic"])
    with pytest.raises(TypeError, match=r"input names must be strings .* got 1"):  # was: '<' not supported
        crew.kickoff({1: "x", "topic": "bees"})
    assert rec.calls == []


async def test_kickoff_inside_a_running_loop_runs_on_a_worker_thread():
    threads = []

    def reply(messages, tools):
        threads.append(threading.current_thread().name)
        return "from a worker loop"

    agent = Agent(role="w", goal="g", llm=FunctionModel(reply))
    crew = Crew(agents=[agent], tasks=[Task(description="d", agent=agent)])
    assert crew.kickoff().raw == "from a worker loop"  # sync call, a loop is running here
    assert threads[0].startswith("crew-kickoff")
    assert (await crew.kickoff_async()).raw == "from a worker loop"  # the async way: on this loop
    assert threads[1] == threading.current_thread().name


def test_the_crew_llm_serves_agents_without_one_and_a_missing_model_is_a_clear_error():
    rec = Recorder()
    bare = Agent(role="Bare", goal="g")
    task = Task(description="solo", agent=bare)
    assert Crew(agents=[bare], tasks=[task], llm=rec.model()).kickoff().raw == "output of solo"
    with pytest.raises(ConfigError, match="agent 'Bare' has no llm and the crew has no default"):
        Crew(agents=[bare], tasks=[task]).kickoff()


def test_the_crew_step_callback_sees_every_agent_turn():
    rec = Recorder()
    agent = rec.agent()
    steps = []
    Crew(agents=[agent], tasks=dag(agent, {"a": [], "b": []}), step_callback=steps.append).kickoff()
    assert len(steps) == 2


def test_max_rpm_makes_every_model_call_draw_from_one_crew_budget():
    rec = Recorder()
    a, b = rec.agent("A"), rec.agent("B")
    crew = Crew(agents=[a, b], tasks=[Task(description="x", agent=a), Task(description="y", agent=b)], max_rpm=50)
    crew.kickoff()
    crew.kickoff()
    assert len(crew._limiter._starts) == 4  # both agents, both kickoffs: one sliding window
    assert rec.tasks_called() == ["x", "y", "x", "y"]


def test_verbose_prints_one_line_per_task_event(capsys):
    rec = Recorder()
    agent = rec.agent()
    Crew(agents=[agent], tasks=dag(agent, {"a": []}), verbose=True, name="loud").kickoff()
    err = capsys.readouterr().err.splitlines()
    assert err == ["[loud] run.start", "[loud] task.start 'a' Worker", "[loud] task.done 'a' Worker", "[loud] run.done"]


def test_the_hierarchical_manager_delegates_to_two_coworkers():
    delegated = {}

    def coworker(role):
        def reply(messages, tools):
            delegated[role] = messages[1]["content"]
            return f"{role} finished"

        return reply

    researcher = Agent(role="Researcher", goal="find facts", llm=FunctionModel(coworker("Researcher")))
    writer = Agent(role="Writer", goal="write", llm=FunctionModel(coworker("Writer")))

    def manager(messages, tools):
        names = [t["function"]["name"] for t in tools]
        results = [m["content"] for m in messages if m["role"] == "tool"]
        if results:
            return "combined: " + " + ".join(results)
        delegate = next(n for n in names if "elegate" in n)
        return [
            {
                "name": delegate,
                "args": {"task": "collect facts on {topic}", "context": "for a report", "coworker": "Researcher"},
            },
            {
                "name": delegate,
                "args": {"task": "draft the report", "context": "use plain words", "coworker": "writer"},
            },
        ]

    report = Task(description="Write a report on {topic}", expected_output="a report")
    crew = Crew(agents=[researcher, writer], tasks=[report], process="hierarchical", manager_llm=FunctionModel(manager))
    out = crew.kickoff({"topic": "bees"})
    assert out.raw == "combined: Researcher finished + Writer finished"
    assert "collect facts" in delegated["Researcher"] and "draft the report" in delegated["Writer"]
    assert out.tasks_output[0].agent == "Crew Manager"
    assert out.usage.requests == 4  # the manager's two turns and one per coworker
    assert sum(s.calls for s in out.tool_stats.values()) == 2


def test_a_given_manager_agent_keeps_its_own_settings():
    offered = []

    def manager(messages, tools):
        offered.extend(t["function"]["name"] for t in tools)
        return "decided alone"

    boss = Agent(role="Boss", goal="lead", llm=FunctionModel(manager))
    helper = Agent(role="Helper", goal="help", llm="test")
    out = Crew(agents=[helper], tasks=[Task(description="d")], process="hierarchical", manager_agent=boss).kickoff()
    assert out.raw == "decided alone" and out.tasks_output[0].agent == "Boss"
    assert len(offered) == 2 and all("coworker" in name.lower() for name in offered)
    assert boss.tools == []  # the delegation tools went to this run's copy only


def test_an_agent_allowed_to_delegate_gets_tools_over_its_coworkers_even_with_task_tools():
    @tool
    def notes() -> str:
        """Read the notes."""
        return "notes"

    offered = []

    def lead(messages, tools):
        offered.append(sorted(t["function"]["name"] for t in tools))
        results = [m["content"] for m in messages if m["role"] == "tool"]
        if results:
            return "lead: " + results[0]
        delegate = next(t["function"]["name"] for t in tools if "elegate" in t["function"]["name"])
        return [{"name": delegate, "args": {"task": "check it", "context": "none", "coworker": "Checker"}}]

    boss = Agent(role="Lead", goal="g", llm=FunctionModel(lead), allow_delegation=True)
    checker = Agent(role="Checker", goal="g", llm=FunctionModel(lambda m, t: "checked"))
    out = Crew(agents=[boss, checker], tasks=[Task(description="d", agent=boss, tools=[notes])]).kickoff()
    assert out.raw == "lead: checked"
    assert len(offered[0]) == 3 and "notes" in offered[0]
    assert not boss.tools  # the declaration is untouched


def test_hierarchical_needs_a_manager_model_and_someone_to_delegate_to():
    helper = Agent(role="Helper", goal="help", llm="test")
    crew = Crew(agents=[helper], tasks=[Task(description="d")], process="hierarchical")  # loads without a model
    with pytest.raises(ConfigError, match="the hierarchical process needs a model for its manager: set manager_llm"):
        crew.kickoff()
    boss = Agent(role="Boss", goal="lead", llm="test")
    for agents in ([], [boss]):
        with pytest.raises(ConfigError, match="needs agents for the manager to delegate to"):
            Crew(agents=agents, tasks=[Task(description="d")], process="hierarchical", manager_agent=boss)


def run_python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_building_a_crew_that_needs_litellm_starts_importing_it_in_the_background():
    out = run_python("""
        import threading
        from crew import Agent, Crew, Task
        def importing():
            return any(t.name == "crew-litellm-import" for t in threading.enumerate())
        offline = Agent(role="r", goal="g", llm="test")
        Crew(agents=[offline], tasks=[Task(description="d", agent=offline)])
        before = importing()
        native = Agent(role="r", goal="g", llm="openai/gpt-4o-mini")  # the native transport needs no litellm
        Crew(agents=[native], tasks=[Task(description="d", agent=native)])
        for_native = importing()
        real = Agent(role="r", goal="g", llm="anthropic/claude-3-5-haiku-latest")
        fields = {"agents": [real], "tasks": [Task(description="d", agent=real)]}
        Crew.model_validate(fields, context={"prewarm": False})  # e.g. `crew validate`
        inspecting = importing()
        Crew(agents=[real], tasks=[Task(description="d", agent=real)])
        print(before, for_native, inspecting, importing())
    """)
    assert out == "False False False True"


def test_tasks_of_one_agent_run_concurrently_in_the_graph_process():
    rec = Recorder(latency=0.05)
    agent = rec.agent()
    out = Crew(agents=[agent], tasks=dag(agent, {"a": [], "b": [], "c": []}), process="graph").kickoff()
    assert rec.peak == 3 and sorted(rec.tasks_called()) == ["a", "b", "c"]
    assert [o.raw for o in out.tasks_output] == ["output of a", "output of b", "output of c"]  # no crossed wires


def test_two_agents_with_different_tools_of_one_name_each_get_their_own_result():
    """Agent A's ``lookup`` and agent B's unrelated ``lookup``: B was handed A's cached answer."""

    @tool("lookup")
    def weather(city: str) -> str:
        """Weather of a city."""
        return f"weather in {city}: sunny"

    @tool("lookup")
    def population(city: str) -> str:
        """Population of a city."""
        return f"population of {city}: 1M"

    def reply(messages, tools, info):
        if messages[-1]["role"] != "tool":
            return [{"name": "lookup", "args": {"city": "Oslo"}}]
        return messages[-1]["content"]

    a = Agent(role="A", goal="G", llm=FunctionModel(reply), tools=[weather])
    b = Agent(role="B", goal="G", llm=FunctionModel(reply), tools=[population])
    tasks = [Task(name="a", description="x", agent=a), Task(name="b", description="x", agent=b)]
    outputs = Crew(agents=[a, b], tasks=tasks).kickoff().tasks_output
    assert [o.raw for o in outputs] == ["weather in Oslo: sunny", "population of Oslo: 1M"]
    assert [call.cached for o in outputs for call in o.tool_calls] == [False, False]
