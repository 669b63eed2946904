"""What the run store hands back: one run, its tasks, its model and tool calls.

Pydantic models, because they cross a boundary: ``crew runs --json`` and ``crew show
--json`` print them, and the HTML timeline is drawn from them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field

from crew.common.usage import Usage
from crew.tools.messages import is_stand_in


class StoredRun(BaseModel):
    """One run: what was run, how it went, what it spent (its own work only)."""

    model_config = ConfigDict(defer_build=True)

    id: str
    crew: str
    crew_hash: str
    folder: str | None = None
    inputs: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    status: str
    """running, done, failed or interrupted (a "running" run whose process is gone)."""
    mode: str = "kickoff"
    """kickoff, resume or replay."""
    continued_from: str | None = None
    from_task: str | None = None
    started_at: float
    finished_at: float | None = None
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None
    pid: int | None = None
    host: str | None = None
    kind: str = "crew"
    """crew, or flow (then ``crew`` is the flow's name and its steps are ``StoredStep`` rows)."""
    parent_run: str | None = None
    """The flow run whose step kicked this crew off, if any (with ``parent_step``)."""
    parent_step: str | None = None

    @property
    def duration(self) -> float | None:
        return None if self.finished_at is None else self.finished_at - self.started_at


class StoredTask(BaseModel):
    """One task of a run; ``output`` is the TaskOutput as JSON once the task finished."""

    model_config = ConfigDict(defer_build=True)

    name: str
    position: int
    agent: str | None = None
    def_hash: str
    status: str
    """pending, running, done, failed or skipped."""
    reused: bool = False
    """The output was taken from the run this one continued, not produced here."""
    output: dict[str, Any] | None = None
    error: str | None = None
    started_at: float | None = None
    finished_at: float | None = None
    usage: Usage = Field(default_factory=Usage)
    attempts: int = 0

    @property
    def raw(self) -> str:
        return str((self.output or {}).get("raw") or "")


class StoredModelCall(BaseModel):
    model_config = ConfigDict(defer_build=True)

    id: int
    task: str | None = None
    agent: str | None = None
    model: str | None = None
    status: str
    started_at: float
    latency: float = 0.0
    attempts: int = 1
    message_count: int = 0
    message_chars: int = 0
    messages: str | None = None
    """The messages sent, as JSON, cut to the store's ``max_text`` characters."""
    reply: str | None = None
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    error: str | None = None


class StoredToolCall(BaseModel):
    model_config = ConfigDict(defer_build=True)

    id: int
    task: str | None = None
    agent: str | None = None
    tool: str
    status: str
    cached: bool = False
    refused: bool = False
    started_at: float
    duration: float = 0.0
    args: Any = None
    result: str | None = None

    @computed_field
    @property
    def stand_in(self) -> bool:
        """A dry run's stand-in result (the test model without ``--live-tools``): the tool did not run."""
        return is_stand_in(self.result)


class StoredStep(BaseModel):
    """One run of one step of a flow: the ``number``-th run of ``step`` (1, 2, ... in a loop)."""

    model_config = ConfigDict(defer_build=True)

    step: str
    number: int = 1
    seq: int = 0
    """The order the flow run started its step runs in."""
    status: str
    """running, done, failed, paused or interrupted."""
    reused: bool = False
    """A resume handed on the output of the run it continued: the step did not run again."""
    input: Any = None
    output: Any = None
    """The output as JSON (a pydantic model as ``{"model": "module:Class", "value": ...}``)."""
    state: dict[str, Any] | None = None
    """The flow's state right after the step finished (or failed)."""
    error: str | None = None
    started_at: float | None = None
    finished_at: float | None = None

    @property
    def duration(self) -> float | None:
        return None if self.started_at is None or self.finished_at is None else self.finished_at - self.started_at


class RunDetail(BaseModel):
    """A run with everything recorded about it (``crew show``)."""

    model_config = ConfigDict(defer_build=True)

    run: StoredRun
    tasks: list[StoredTask] = Field(default_factory=list)
    model_calls: list[StoredModelCall] = Field(default_factory=list)
    tool_calls: list[StoredToolCall] = Field(default_factory=list)
    steps: list[StoredStep] = Field(default_factory=list)
    """A flow run's step runs, in the order they started (empty for a crew's run)."""
    children: list[RunDetail] = Field(default_factory=list)
    """A flow run's crews, each with everything recorded about it (``parent_step`` says whose)."""

    def task(self, name: str) -> StoredTask:
        for task in self.tasks:
            if task.name == name:
                return task
        raise KeyError(name)
