"""Crews and tools the backend tests ship to other processes (importable, so pickle can name them)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from crew import Agent, Crew, StringKnowledgeSource, Task, tool
from crew.testing import FunctionModel
from crew.tools.base import BaseTool


def _shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


shout = tool("shout", _shout)  # the function stays importable under its own name: plain pickle can name it


@tool(parse_docstring=True)
def describe(topic: str, words: int = 3) -> str:
    """Describe a topic.

    Args:
        topic: what to describe
        words: how many words
    """
    return " ".join([topic] * words)


@tool(max_usage_count=3)
def ping(n: int) -> str:
    """Answer a ping."""
    return f"pong {n}"


lookup = tool(
    "lookup",
    lambda key: f"value of {key}",
    description="Look a key up.",
    args_schema={"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
)


class Counter(BaseTool):
    """Count the characters of a text."""

    name: str = "counter"

    def _run(self, text: str) -> int:
        return len(text)


class Database(BaseTool):
    """Query the database."""

    name: str = "database"
    conn: Any = None

    def _run(self, sql: str) -> str:
        return str(self.conn.execute(sql).fetchall())


def database_tool() -> Database:
    return Database(conn=sqlite3.connect(":memory:", check_same_thread=False))


@tool
def crash_once(marker: str) -> str:
    """Kill the process running it the first time (a worker dying mid-task), then succeed."""
    path = Path(marker)
    attempts = int(path.read_text()) if path.exists() else 0
    path.write_text(str(attempts + 1))
    if attempts == 0:
        os._exit(1)
    return f"survived after {attempts + 1} attempts"


def reply(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    """Call the first tool once with the task's words, then answer with what came back."""
    results = [m["content"] for m in messages if m.get("role") == "tool"]
    if tools and not results:
        name = tools[0]["function"]["name"]
        args = {"shout": {"text": "hi"}, "ping": {"n": 1}, "describe": {"topic": "t"}}.get(name, {})
        if name == "crash_once":
            args = {"marker": messages[-1]["content"].split("marker=")[1].split()[0]}
        return [{"name": name, "args": args}]
    task = messages[-1]["content"].split("\n")[0]
    return f"answer to {task!r}" + (f" with {results}" if results else "")


def topic_crew(tools: list[Any] | None = None, latency: float = 0.0, **crew_options: Any) -> Crew:
    agent = Agent(
        role="writer", goal="write", backstory="writes", llm=FunctionModel(reply, latency=latency), tools=tools or []
    )
    task = Task(description="write about {topic}", expected_output="a line", agent=agent)
    return Crew(agents=[agent], tasks=[task], **crew_options)


def _office_reply(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """Say whether the prompt held the knowledge passage and a memory section."""
    prompt = messages[-1]["content"]
    return f"office: knows={'opens at 9' in prompt} remembers={'What you remember' in prompt}"


def office_crew(folder: Path, **crew_options: Any) -> Crew:
    """A crew with memory and a knowledge source, its files in ``folder`` (keywords only: no
    embedder to load on the workers)."""
    agent = Agent(role="clerk", goal="g", backstory="b", llm=FunctionModel(_office_reply))
    task = Task(name="hours", description="When does the office open on {day}?", expected_output="a time", agent=agent)
    return Crew(
        name="office",
        agents=[agent],
        tasks=[task],
        memory={"embedder": "none"},  # beside the run store, which a worker running a whole kickoff does not get
        embedder="none",
        knowledge_sources=[StringKnowledgeSource(content="The office opens at 9 on weekdays.")],
        knowledge_folder=folder / "knowledge",
        store=str(folder / "runs.db"),
        **crew_options,
    )
