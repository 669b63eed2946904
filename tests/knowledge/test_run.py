"""Knowledge in a run: each task's prompt holds the passages that answer it, with their source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from knowledge_kit import crewai_project

from crew import Agent, Crew, Task
from crew.config import load_project
from crew.errors import KnowledgeSourceError
from crew.knowledge import StringKnowledgeSource, TextFileKnowledgeSource
from crew.testing import FunctionModel


def prompts_of(crew: Crew) -> list[str]:
    """Give every agent a model that keeps each task prompt it is sent."""
    seen: list[str] = []

    def reply(messages, tools):
        seen.append(messages[-1]["content"])
        return "Take a break every 30 minutes."

    for agent in crew.all_agents():
        agent.llm = FunctionModel(reply)
    return seen


@pytest.fixture(scope="module")
def quest(tmp_path_factory) -> Path:
    """The meta_quest_knowledge-shaped project, indexed once for the module."""
    return crewai_project(tmp_path_factory.mktemp("quest"))


def test_the_task_prompt_holds_the_pdf_passage_that_answers_it(quest: Path, tmp_path: Path):
    crew = load_project(quest).crew
    crew.store = tmp_path / "runs.db"
    prompts = prompts_of(crew)
    crew.kickoff(inputs={"question": "How often should I take breaks?"})
    [prompt] = prompts
    knowledge = prompt[prompt.index("Relevant knowledge") :]
    first = knowledge.split("\n- ")[1]
    assert "Take a break every 30 minutes" in first and first.rstrip().endswith("(manual.pdf, page 2)")
    assert "The headset is called Quest. (string 'The headset is called Quest.')" in knowledge  # the agent's own
    assert (tmp_path / "knowledge.db").is_file()  # beside the run store


def test_an_agent_reads_the_crews_sources_and_its_own_never_anothers(tmp_path: Path):
    (tmp_path / "knowledge").mkdir()
    (tmp_path / "knowledge" / "plan.txt").write_text("The launch is on the fifth of May.", encoding="utf-8")
    alice = Agent(role="Alice", goal="g", knowledge_sources=[StringKnowledgeSource(content="Alice's code is 1234.")])
    bob = Agent(role="Bob", goal="g", knowledge_sources=[StringKnowledgeSource(content="Bob's code is 9876.")])
    crew = Crew(
        agents=[alice, bob],
        tasks=[
            Task(name="a", description="What is the launch date and the code?", expected_output="x", agent=alice),
            Task(name="b", description="What is the launch date and the code?", expected_output="x", agent=bob),
        ],
        knowledge_sources=[TextFileKnowledgeSource(file_paths=["plan.txt"])],
        knowledge_folder=tmp_path / "knowledge",
        store=tmp_path / "runs.db",
    )
    prompts = prompts_of(crew)
    crew.kickoff()
    for prompt, mine, theirs in zip(prompts, ("1234", "9876"), ("9876", "1234"), strict=True):
        assert "fifth of May" in prompt and mine in prompt and theirs not in prompt


def test_a_bad_source_stops_the_run_before_any_model_call(tmp_path: Path):
    (tmp_path / "knowledge").mkdir()
    (tmp_path / "knowledge" / "notes.txt").write_bytes(b"caf\xe9")
    agent = Agent(role="Writer", goal="g")
    crew = Crew(
        agents=[agent],
        tasks=[Task(description="d", expected_output="e", agent=agent)],
        knowledge_sources=[TextFileKnowledgeSource(file_paths="notes.txt")],
        knowledge_folder=tmp_path / "knowledge",
    )
    prompts = prompts_of(crew)
    with pytest.raises(KnowledgeSourceError, match=r"knowledge source notes\.txt at line 1, byte 3: not UTF-8"):
        crew.kickoff()
    assert prompts == []


def test_crew_knowledge_index_and_search_on_the_command_line(quest: Path, tmp_path: Path, capsys):
    from crew.cli import main

    store = str(tmp_path / "runs.db")
    assert main(["knowledge", str(quest), "index", "--store", store, "--json"]) == 0
    indexed = json.loads(capsys.readouterr().out)
    assert sorted((s["source"], s["chunks"]) for s in indexed["sources"]) == [
        ("manual.pdf", 3),
        ("string 'The headset is called Quest.'", 1),
    ]
    assert main(["knowledge", str(quest), "search", "cleaning the lenses", "--store", store, "--json"]) == 0
    best = json.loads(capsys.readouterr().out)[0]
    assert (best["source"], best["page"]) == ("manual.pdf", 3) and "microfibre" in best["text"]
    assert main(["knowledge", str(quest), "search", "lenses", "--store", store, "--limit", "1"]) == 0
    assert capsys.readouterr().out.startswith("1. manual.pdf, page 3  (score ")
    assert main(["knowledge", str(quest), "search", "--store", store]) == 2
    assert "give the words to search for" in capsys.readouterr().err


def test_what_a_task_was_given_is_recorded_and_a_replay_gives_it_again(tmp_path: Path, capsys):
    from crew import RunStore
    from crew.cli import main
    from crew.testing.pdf import write_pdf

    folder = crewai_project(tmp_path / "project")
    crew = load_project(folder).crew
    crew.store = tmp_path / "runs.db"
    prompts = prompts_of(crew)
    first = crew.kickoff(inputs={"question": "How often should I take breaks?"})
    store = RunStore(tmp_path / "runs.db")
    (section,) = store.detail(first.run_id).context
    best = section.items[0]
    assert (section.provider, best["source"]) == ("knowledge", "manual.pdf, page 2") and best["score"] > 0
    assert main(["show", first.run_id, "--store", str(store.path)]) == 0
    shown = capsys.readouterr().out
    assert "knowledge: 4 items in the prompt" in shown and "manual.pdf, page 2: Health and safety." in shown
    write_pdf(folder / "knowledge" / "manual.pdf", ["A manual that says nothing of breaks."])  # the file changes
    crew.replay(first.run_id, from_task="answer")
    given = prompts[0][prompts[0].index("Relevant knowledge") :]
    assert prompts[1][prompts[1].index("Relevant knowledge") :] == given  # what the run was given, not a new search
