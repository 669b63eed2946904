"""Shared helpers for the crew tests: a FunctionModel-backed "worker" that records what it saw.

Each task's description is its name, so the model function can tell which task it is
answering (the prompt starts with "Task: <description>") and which context outputs it
was given (each appears under a "## <task name>" heading).
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from crew import Agent, Task
from crew.testing import FunctionModel

_TASK = re.compile(r"^Task: (\S+)", re.M)
_CONTEXT = re.compile(r"^## (\S+)$", re.M)
_FEEDBACK = re.compile(r"rejected with this feedback; address it:\n(.*)", re.S)
_PREVIOUS = re.compile(r"Your previous answer was:\n(.*?)\n\nIt was rejected", re.S)


def user_text(messages: list[dict[str, Any]]) -> str:
    return next(m["content"] for m in messages if m["role"] == "user")


def task_of(messages: list[dict[str, Any]]) -> str:
    return _TASK.search(user_text(messages)).group(1)


def context_of(messages: list[dict[str, Any]]) -> list[str]:
    return _CONTEXT.findall(user_text(messages))


def feedback_of(messages: list[dict[str, Any]]) -> str | None:
    match = _FEEDBACK.search(user_text(messages))
    return match.group(1).strip() if match else None


def previous_of(messages: list[dict[str, Any]]) -> str | None:
    match = _PREVIOUS.search(user_text(messages))
    return match.group(1) if match else None


@dataclass
class Call:
    task: str
    start: float
    end: float
    context: list[str]
    feedback: str | None
    previous: str | None = None  # the rejected answer quoted beside the feedback


@dataclass
class Recorder:
    """A model function: sleeps ``durations[task]`` (default ``latency``), records the call, answers.

    ``fail`` maps a task to how many of its first calls raise; ``reply`` may compute the answer.
    """

    latency: float = 0.0
    durations: Mapping[str, float] = field(default_factory=dict)
    fail: dict[str, int] = field(default_factory=dict)
    reply: Callable[[str, list[dict[str, Any]]], str] | None = None
    calls: list[Call] = field(default_factory=list)
    running: int = 0
    peak: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    async def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        task = task_of(messages)
        start = time.perf_counter()
        with self._lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
        try:
            await asyncio.sleep(self.durations.get(task, self.latency))
        finally:
            with self._lock:
                self.running -= 1
        self.calls.append(
            Call(task, start, time.perf_counter(), context_of(messages), feedback_of(messages), previous_of(messages))
        )
        if self.fail.get(task, 0) > 0:
            self.fail[task] -= 1
            raise RuntimeError(f"model failure on {task}")
        return self.reply(task, messages) if self.reply else f"output of {task}"

    def model(self) -> FunctionModel:
        return FunctionModel(self)

    def agent(self, role: str = "Worker", **kwargs: Any) -> Agent:
        return Agent(role=role, goal="do the task", llm=self.model(), **kwargs)

    def call(self, task: str) -> Call:
        matches = [c for c in self.calls if c.task == task]
        assert matches, f"task {task} never reached the model"
        return matches[-1]

    def tasks_called(self) -> list[str]:
        return [c.task for c in self.calls]


def dag(agent: Agent, edges: Mapping[str, list[str]], **task_fields: Any) -> list[Task]:
    """Tasks named by ``edges``' keys (declared in that order), each needing the listed tasks."""
    tasks: dict[str, Task] = {}
    for name, deps in edges.items():
        tasks[name] = Task(
            name=name,
            description=name,
            expected_output="text",
            agent=agent,
            context=[tasks[d] for d in deps],
            **task_fields,
        )
    return list(tasks.values())
