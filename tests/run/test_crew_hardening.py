"""Issue 9 at the Python API: output paths, whose timeout it was, settings changed after construction."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from crew_testkit import Recorder

from crew import Agent, ConfigError, Crew, CrewRunError, Task
from crew.testing import FunctionModel


def _writer(tmp_path: Path, template: str) -> tuple[Crew, Recorder]:
    rec = Recorder()
    agent = rec.agent()
    task = Task(name="t", description="t", agent=agent, output_file=template)
    return Crew(agents=[agent], tasks=[task]), rec


@pytest.mark.parametrize(
    ("template", "inputs"),
    [
        ("{p}.md", {"p": "ABSOLUTE"}),
        ("{p}.md", {"p": "~/crew-home-escape"}),
        ("out/{a}{b}/x.md", {"a": ".", "b": "."}),
        ("out/{a}/{b}/x.md", {"a": ".", "b": ".."}),
    ],
)
def test_an_input_built_path_stays_in_its_folder_after_every_expansion(tmp_path, monkeypatch, template, inputs):
    """Item 9: absolute values, `~`, and `..` assembled from several inputs moved the file out."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    inputs = {k: str(outside / "abs") if v == "ABSOLUTE" else v for k, v in inputs.items()}
    crew, rec = _writer(tmp_path, template)
    with pytest.raises(ConfigError, match="out of its folder"):
        crew.kickoff(inputs)
    assert rec.calls == []
    assert not outside.exists() and not (tmp_path / "home").exists()
    assert not list(tmp_path.rglob("*.md"))


def test_a_literal_path_keeps_its_meaning(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "elsewhere" / "fixed.md"
    crew, _ = _writer(tmp_path, str(target))
    crew.kickoff()
    assert target.read_text() == "output of t"
    crew, _ = _writer(tmp_path, "out/{p}/../{p}.md")  # `..` written in the YAML itself is the author's choice
    crew.kickoff({"p": "a"})
    assert (tmp_path / "out" / "a.md").is_file()


def test_a_symlink_on_the_path_is_not_followed_out_of_the_folder(tmp_path, monkeypatch):
    """Item 9: `out/{p}.md` with p=link/x, where out/link points outside."""
    monkeypatch.chdir(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "out").mkdir()
    os.symlink(outside, tmp_path / "out" / "link")
    crew, _ = _writer(tmp_path, "out/{p}.md")
    with pytest.raises(CrewRunError) as caught:
        crew.kickoff({"p": "link/x"})
    assert "through a symbolic link" in str(caught.value)
    assert not list(outside.iterdir())
    crew.kickoff({"p": "inside/x"})
    assert (tmp_path / "out" / "inside" / "x.md").is_file()


def test_a_timeout_raised_inside_a_task_is_not_the_tasks_timeout():
    """Item 14: the agent's max_execution_time of 0.2 s was reported as "task 't' timed out after 30 s"."""

    async def slow(messages, tools):
        await asyncio.sleep(2)
        return "late"

    agent = Agent(role="slow", goal="g", llm=FunctionModel(slow), max_execution_time=0.2)
    crew = Crew(agents=[agent], tasks=[Task(name="t", description="t", agent=agent, timeout=30)])
    with pytest.raises(CrewRunError) as caught:
        crew.kickoff()
    text = str(caught.value)
    assert "max_execution_time of 0.2 s" in text
    assert "timed out after 30 s" not in text


def test_max_rpm_set_after_construction_is_enforced():
    """Item 15: the limiter was only built in the constructor's validator."""
    rec = Recorder()
    agent = rec.agent()
    crew = Crew(agents=[agent], tasks=[Task(name="t", description="t", agent=agent)])
    assert crew.limiter is None
    crew.max_rpm = 2
    crew.kickoff()
    limiter = crew.limiter
    assert limiter is not None and limiter.rate == 2
    now = time.monotonic()
    assert limiter.reserve() - now < 1  # the run used one of the two requests of this minute
    assert limiter.reserve() - now > 50  # so the third must wait for the window
    crew.max_rpm = 100
    assert crew.limiter is not limiter and crew.limiter.rate == 100


def test_a_throttled_copy_does_not_evict_the_agents_model():
    """Item 16: copies share the model cache; a throttled copy evicted the original's LLM."""
    from crew.models.ratelimit import RateLimiter, Throttled

    agent = Agent(role="w", goal="g", llm="openai/gpt-4o-mini")
    first = agent.chat_model()
    copy = agent.model_copy(update={"llm": Throttled(first, RateLimiter(10))})
    assert copy.chat_model() is copy.llm
    assert agent.chat_model() is first
    assert agent.interpolate({}).chat_model() is first  # a kickoff's filled-in copy shares the one LLM


def test_one_llm_serves_every_kickoff_of_a_throttled_crew():
    agent = Agent(role="w", goal="g", llm="test")
    crew = Crew(agents=[agent], tasks=[Task(name="t", description="t", agent=agent)], max_rpm=1000)
    model = agent.chat_model()
    crew.kickoff()
    crew.kickoff()
    assert agent.chat_model() is model
