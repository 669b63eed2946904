"""What a streamed run yields: one typed event per thing that happened, in the order it happened.

Every event carries the run's id and, where it has one, the task and agent it belongs to,
so the deltas of tasks running side by side can be told apart by ``event.task``. Each is a
frozen pydantic model with a literal ``type``: ``isinstance`` or ``match`` on the class in
Python, ``event.type`` in JSON (``to_json`` writes one line per event). A streamed crew ends
with its ``CrewOutput`` (an agent with its ``TaskOutput``), the way a streamed model reply
ends with its ``LLMResponse``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from crew.tasks.output import CrewOutput, TaskOutput

__all__ = [
    "AgentTurnStarted",
    "ApprovalRequested",
    "RunStarted",
    "StreamEvent",
    "TaskFailed",
    "TaskFinished",
    "TaskSkipped",
    "TaskStarted",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "to_json",
]


class StreamEvent(BaseModel):
    """The base of every streamed event."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, defer_build=True)

    type: Any  # each event narrows it to its literal (the JSON discriminator)
    run_id: str
    time: float = 0.0
    """When it happened (``time.time()``)."""


class RunStarted(StreamEvent):
    type: Literal["run.started"] = "run.started"
    crew: str = ""
    tasks: list[str] = Field(default_factory=list)
    step: str | None = None
    """The flow step that kicked this crew off (a streamed flow), else None."""


class TaskStarted(StreamEvent):
    type: Literal["task.started"] = "task.started"
    task: str
    agent: str | None = None


class TaskFinished(StreamEvent):
    type: Literal["task.finished"] = "task.finished"
    task: str
    agent: str | None = None
    output: TaskOutput


class TaskFailed(StreamEvent):
    type: Literal["task.failed"] = "task.failed"
    task: str
    agent: str | None = None
    error: str = ""
    output: TaskOutput


class TaskSkipped(StreamEvent):
    type: Literal["task.skipped"] = "task.skipped"
    task: str
    reason: str = ""
    output: TaskOutput


class AgentTurnStarted(StreamEvent):
    """A model call is about to be made for ``agent`` on ``task`` (turn ``turn`` of its loop)."""

    type: Literal["agent.turn"] = "agent.turn"
    task: str
    agent: str
    turn: int


class TextDelta(StreamEvent):
    """A piece of the model's reply, as the provider streamed it.

    The deltas of one model call, concatenated, are that call's text (``AgentStep.text``).
    """

    type: Literal["text.delta"] = "text.delta"
    task: str
    agent: str
    text: str
    turn: int = 0


class ToolCallStarted(StreamEvent):
    type: Literal["tool.started"] = "tool.started"
    task: str | None = None
    agent: str | None = None
    tool: str
    call_id: str
    args: dict[str, Any] = Field(default_factory=dict)


class ToolCallFinished(StreamEvent):
    """A tool call's outcome: ``cached`` (served from the cache), ``refused`` (no usage slot left)."""

    type: Literal["tool.finished"] = "tool.finished"
    task: str | None = None
    agent: str | None = None
    tool: str
    call_id: str | None = None
    status: str = "success"
    cached: bool = False
    refused: bool = False
    duration: float = 0.0
    result: str | None = None


class ApprovalRequested(StreamEvent):
    """A tool call waits for a person's decision (see docs/approvals.md)."""

    type: Literal["approval.requested"] = "approval.requested"
    task: str | None = None
    agent: str | None = None
    tool: str
    call_id: str
    args: dict[str, Any] = Field(default_factory=dict)


def to_json(item: StreamEvent | CrewOutput | TaskOutput) -> str:
    """One line of JSON for a streamed item (JSON Lines); the final output is ``{"type": "output", ...}``."""
    if isinstance(item, StreamEvent):
        return item.model_dump_json()
    if isinstance(item, CrewOutput):  # a run past a failed task (on_error="continue") says which, and why
        failed = [t for t in item.tasks_output if t.status == "failed"]
        error = "; ".join(f"task '{t.name}' failed: {t.error}" for t in failed) or None
    else:
        error = item.error
    document = {"type": "output", "status": item.status, "error": error, "output": item.model_dump(mode="json")}
    return json.dumps(document, ensure_ascii=False, default=str)
