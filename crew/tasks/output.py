"""What a task and a crew produce: outputs, statuses, usage and timings.

These models are built on first use (``defer_build``): loading a crew to validate or
plot it never needs them, and building their validators costs startup time.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from crew.common.usage import Usage
from crew.tools.execution.stats import ToolStats

TaskStatus = Literal["done", "failed", "skipped", "paused"]


class ToolCallRecord(BaseModel):
    """One tool call made while a task ran, as kept in its output."""

    model_config = ConfigDict(defer_build=True)

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    status: Literal["success", "error"] = "success"
    cached: bool = False
    refused: bool = False
    duration: float = 0.0


class _Answer:
    """What a task's and a crew's outputs share: one answer as text, a model or a dict."""

    raw: str
    pydantic: Any
    json_dict: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        if self.json_dict is not None:
            return self.json_dict
        if self.pydantic is not None:
            return self.pydantic.model_dump(mode="json")
        return {}

    def __getitem__(self, key: str) -> Any:
        """``output["field"]``: a field of the structured answer (CrewAI's ``CrewOutput`` reads the same way,
        and flows do: ``output["chapters"]``); KeyError naming the fields there are."""
        if self.pydantic is not None and key in type(self.pydantic).model_fields:
            return getattr(self.pydantic, key)
        if self.json_dict is not None and key in self.json_dict:
            return self.json_dict[key]
        fields = sorted(self.to_dict())
        raise KeyError(f"{key!r}: the answer has {'the fields ' + ', '.join(fields) if fields else 'no fields'}")

    def __str__(self) -> str:
        if self.pydantic is not None:
            return self.pydantic.model_dump_json()
        if self.json_dict is not None:
            return json.dumps(self.json_dict, ensure_ascii=False)
        return self.raw


class TaskOutput(_Answer, BaseModel):
    """The result of one task. ``raw`` is empty unless ``status`` is "done"."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    name: str
    description: str = ""
    expected_output: str = ""
    raw: str = ""
    pydantic: Any = None
    json_dict: dict[str, Any] | None = None
    agent: str | None = None
    model: str | None = None
    status: TaskStatus = "done"
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    started_at: float | None = None
    finished_at: float | None = None
    attempts: int = 1
    output_file: str | None = None
    """The file this output was written to (``Task.output_file`` filled in), once written."""

    @property
    def duration(self) -> float:
        if self.started_at is None or self.finished_at is None:
            return 0.0
        return self.finished_at - self.started_at


class CrewOutput(_Answer, BaseModel):
    """The result of a kickoff: the final task's output plus every task's, in declared order."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    run_id: str | None = None
    continued_from: str | None = None
    """The run whose stored outputs this one reused (``Crew.resume``/``Crew.replay``)."""
    raw: str = ""
    pydantic: Any = None
    json_dict: dict[str, Any] | None = None
    tasks_output: list[TaskOutput] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    usage_by_task: dict[str, Usage] = Field(default_factory=dict)
    usage_by_agent: dict[str, Usage] = Field(default_factory=dict)
    usage_by_model: dict[str, Usage] = Field(default_factory=dict)
    tool_stats: dict[str, ToolStats] = Field(default_factory=dict)
    status: Literal["done", "failed", "paused"] = "done"
    """"paused": tool calls wait for a person (``pending_approvals``); ``Crew.resume`` goes on."""
    pending_approvals: list[Any] = Field(default_factory=list)
    """The waiting calls (``crew.tools.approval.ApprovalRequest``: call id, tool, arguments, agent, task)."""
    checkpoints: dict[str, Any] = Field(default_factory=dict)
    """Where each paused task stopped (``crew.agent.checkpoint.TaskCheckpoint`` by task name)."""
    started_at: float | None = None
    finished_at: float | None = None

    @property
    def token_usage(self) -> Usage:
        """CrewAI's name for ``usage``."""
        return self.usage

    def task(self, name: str) -> TaskOutput:
        for out in self.tasks_output:
            if out.name == name:
                return out
        raise KeyError(name)

    def __repr__(self) -> str:
        """A summary, not every task's output: a 1000-task run would print pages (and asyncio
        reprs the result of the task it ran on, so a full repr costs every kickoff time)."""
        counts = Counter(o.status for o in self.tasks_output)
        statuses = ", ".join(f"{status} {counts[status]}" for status in ("done", "failed", "skipped") if counts[status])
        raw = self.raw if len(self.raw) <= 60 else self.raw[:57] + "..."
        return (
            f"CrewOutput(run_id={self.run_id!r}, raw={raw!r}, tasks={len(self.tasks_output)}"
            f"{f' ({statuses})' if statuses else ''}, total_tokens={self.usage.total_tokens})"
        )
