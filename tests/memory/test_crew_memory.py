"""Crews remember: each task's output is remembered, and the next run's prompt recalls it."""

from __future__ import annotations

from pathlib import Path

import pytest

from crew import Agent, Crew, Task
from crew.errors import ConfigError
from crew.memory import Memory
from crew.store import RunStore
from crew.testing import FunctionModel

pytest.importorskip("wordllama", reason="the memory extra is not installed")


def recording_agent(prompts: list[str], answers: list[str]) -> Agent:
    def reply(messages, tools):
        prompts.append(messages[1]["content"])
        return answers.pop(0) if answers else "nothing new"

    return Agent(role="Travel Researcher", goal="plan trips", llm=FunctionModel(reply))


def trip_crew(agent: Agent, memory, **options) -> Crew:
    task = Task(
        name="plan",
        description="Plan a weekend trip to {city}",
        expected_output="a short plan with the traveller's preferences",
        agent=agent,
    )
    return Crew(name="trips", agents=[agent], tasks=[task], memory=memory, **options)


def test_the_next_run_recalls_what_the_last_one_remembered(tmp_path: Path):
    prompts: list[str] = []
    agent = recording_agent(prompts, ["The traveller is vegetarian and hates early flights."])
    mem = Memory(tmp_path / "memory.db")
    first = trip_crew(agent, mem).kickoff(inputs={"city": "Lisbon"})
    assert "What you remember" not in prompts[0]
    (record,) = mem.list_records()
    assert record.scope == "/crew/trips/Travel-Researcher"
    assert record.metadata == {"run_id": first.run_id, "task": "plan", "agent": "Travel Researcher", "crew": "trips"}

    trip_crew(agent, mem).kickoff(inputs={"city": "Porto"})
    assert "What you remember" in prompts[1]
    assert (
        f"- The traveller is vegetarian and hates early flights. (run {(first.run_id or '')[:8]}, task plan)"
        in prompts[1]
    )
    assert len(mem.list_records()) == 2


def test_memory_true_lives_beside_the_run_store_and_another_crew_does_not_see_it(tmp_path: Path):
    prompts: list[str] = []
    agent = recording_agent(prompts, ["Budget is 300 euros per weekend trip plan."])
    store = tmp_path / ".crew" / "runs.db"
    trip_crew(agent, True, store=str(store)).kickoff(inputs={"city": "Rome"})
    assert (tmp_path / ".crew" / "memory.db").is_file()
    other = trip_crew(agent, True, store=str(store))
    other.name = "elsewhere"
    other.kickoff(inputs={"city": "Rome"})
    assert "What you remember" not in prompts[1]  # another crew's scope
    trip_crew(agent, {"limit": 1, "scope": "crew"}, store=str(store)).kickoff(inputs={"city": "Rome"})
    assert "Budget is 300 euros" in prompts[2]


def test_memory_settings_are_checked_where_they_are_written():
    agent = Agent(role="a", goal="g", llm="test")
    with pytest.raises(ValueError, match="unknown memory setting 'limt' \\(did you mean 'limit'\\?\\)"):
        trip_crew(agent, {"limt": 3})
    with pytest.raises(ValueError, match=r"memory\.limit must be a whole number"):
        trip_crew(agent, {"limit": "many"})


def test_without_the_embedder_the_kickoff_fails_before_any_model_call_naming_the_install(tmp_path, monkeypatch):
    import sys

    import crew.search.wordllama as module

    monkeypatch.setattr(module, "_model", [])
    monkeypatch.setitem(sys.modules, "wordllama", None)
    prompts: list[str] = []
    crew = trip_crew(recording_agent(prompts, []), {"path": str(tmp_path / "m.db")})
    with pytest.raises(ConfigError, match=r"pip install 'crew-agents\[memory\]'"):
        crew.kickoff(inputs={"city": "Oslo"})
    assert prompts == []


def test_analyze_remembers_the_facts_the_agents_model_extracts_and_bills_the_call_to_the_task(tmp_path: Path):
    asked: list[str] = []

    def reply(messages, tools):
        asked.append(messages[-1]["content"])
        if messages[-1]["content"].startswith("Extract the facts"):
            return "- The traveller is vegetarian.\n\n* The traveller hates early flights.\n"
        return "Day 1: market. Day 2: museum. (Vegetarian, no early flights.)"

    agent = Agent(role="Travel Researcher", goal="plan trips", llm=FunctionModel(reply))
    path = tmp_path / "memory.db"
    crew = trip_crew(agent, {"path": str(path), "embedder": "none", "analyze": True}, store=str(tmp_path / "runs.db"))
    result = crew.kickoff(inputs={"city": "Lisbon"})

    assert len(asked) == 2 and "Day 1: market." in asked[1]  # the output, handed to the same model
    with Memory(path, embedder="none") as mem:
        facts = [(r.content, r.metadata["task"]) for r in mem.list_records()]
    assert facts == [("The traveller is vegetarian.", "plan"), ("The traveller hates early flights.", "plan")]
    # the extraction is the task's spending: in its output, the run's total and the run store
    (task,) = result.tasks_output
    assert task.usage.requests == 2
    assert result.usage.requests == 2 and result.usage_by_task["plan"] == task.usage
    run_id = result.run_id
    assert run_id is not None
    with RunStore(tmp_path / "runs.db") as store:
        (stored,) = store.tasks(run_id)
        assert stored.usage == task.usage
        assert store.run(run_id).usage == result.usage
        calls = store.model_calls(run_id)
        assert [(c.task, c.agent) for c in calls] == [("plan", "Travel Researcher")] * 2
        assert "Extract the facts" in (calls[1].messages or "")


def test_an_agents_own_memory_true_gives_it_memory_in_a_crew_without_one(tmp_path: Path):
    """CrewAI's ``Agent(memory=True)``: that agent recalls and remembers though the crew set no
    memory; its crewmate does neither; ``memory=False`` keeps an agent out of a crew's memory."""
    remembering: list[str] = []
    forgetting: list[str] = []
    keen = recording_agent(remembering, ["The traveller is vegetarian, always."])
    keen.memory = True
    other = recording_agent(forgetting, ["The traveller loves trams in every city."])
    other.role = "Tram Fan"

    def crew() -> Crew:
        tasks = [
            Task(name="plan", description="Plan a weekend trip", expected_output="a plan", agent=keen),
            Task(name="trams", description="Find the tram lines", expected_output="lines", agent=other),
        ]
        return Crew(name="trips", agents=[keen, other], tasks=tasks, store=str(tmp_path / ".crew" / "runs.db"))

    assert crew().memory is not None  # the agent's key turned the crew's memory on, for it alone
    crew().kickoff()
    memory = Memory(tmp_path / ".crew" / "memory.db")
    assert [r.scope for r in memory.list_records()] == ["/crew/trips/Travel-Researcher"]
    crew().kickoff()
    assert "The traveller is vegetarian, always." in remembering[1]
    assert "What you remember" not in forgetting[1]

    keen.memory, other.memory = False, None  # in a crew with memory, an agent may opt out
    opted = Crew(name="trips", agents=[keen, other], tasks=crew().tasks, memory=Memory(tmp_path / "shared.db"))
    opted.kickoff()
    assert [r.scope for r in Memory(tmp_path / "shared.db").list_records()] == ["/crew/trips/Tram-Fan"]
