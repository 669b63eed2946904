"""What a task recalled is recorded: shown by `crew show` and the timeline, and replayed as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crew import Agent, Crew, RunStore, Task
from crew.cli import main
from crew.memory import Memory
from crew.store.timeline import render_timeline
from crew.testing import FunctionModel

pytest.importorskip("wordllama", reason="the memory extra is not installed")


@pytest.fixture
def recorded(tmp_path: Path):
    """Two runs of one crew: the first remembers, the second recalls; the prompts each saw."""
    prompts: list[str] = []
    answers = ["Ana's favourite colour is teal; she dislikes orange.", "A teal poster."]

    def reply(messages, tools):
        prompts.append(messages[1]["content"])
        return answers.pop(0) if answers else "again"

    agent = Agent(role="Designer", goal="design posters", llm=FunctionModel(reply))
    task = Task(name="poster", description="Design a poster for Ana", expected_output="its colours", agent=agent)
    memory = Memory(tmp_path / "memory.db")
    store = tmp_path / "runs.db"
    crew = Crew(name="studio", agents=[agent], tasks=[task], memory=memory, store=str(store))
    first, second = crew.kickoff(), crew.kickoff()
    return crew, memory, RunStore(store), first, second, prompts


def test_the_store_records_each_recalled_item_with_its_id_and_score(recorded):
    _crew, memory, store, first, second, _prompts = recorded
    assert store.detail(first.run_id).context == []  # nothing to recall yet
    (section,) = store.detail(second.run_id).context
    (item,) = section.items
    remembered = next(r for r in memory.list_records() if r.metadata["run_id"] == first.run_id)
    assert (section.task, section.provider, section.replayed) == ("poster", "memory", False)
    assert item["id"] == remembered.id and item["score"] > 0
    assert item["source"] == f"run {first.run_id[:8]}, task poster" and "teal" in item["text"]


def test_crew_show_and_the_timeline_say_what_a_task_recalled(recorded, capsys):
    _crew, _memory, store, first, second, _prompts = recorded
    assert main(["show", second.run_id, "--store", str(store.path)]) == 0
    shown = capsys.readouterr().out
    record_id = store.detail(second.run_id).context[0].items[0]["id"]
    assert "    memory: 1 item in the prompt" in shown
    assert f"      {record_id[:12]} · " in shown and f"run {first.run_id[:8]}, task poster: Ana's favourite" in shown
    assert main(["show", second.run_id, "--store", str(store.path), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["context"][0]["items"][0]["id"] == record_id
    page = render_timeline(store.detail(second.run_id))
    assert "<h2>What tasks recalled</h2>" in page and record_id in page


def test_a_replay_recalls_what_the_run_recalled_not_what_memory_holds_now(recorded):
    crew, memory, store, _first, second, prompts = recorded
    recalled = prompts[1].split("What you remember", 1)[1]
    memory.reset()  # a search now would find nothing
    replay = crew.replay(second.run_id, from_task="poster")
    assert prompts[2].split("What you remember", 1)[1] == recalled
    (section,) = store.detail(replay.run_id).context
    assert section.replayed is True
    assert section.items == store.detail(second.run_id).context[0].items
