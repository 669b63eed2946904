"""Streaming a run: typed events as it goes, then its output (see docs/streaming.md).

``Crew.astream``/``Crew.stream`` and ``Agent.astream``/``Agent.stream`` are the public
entry points; this package holds the events (``events``), the bounded buffer between the
run and its reader (``buffer``), what turns a run's scope into events (``listen``) and the
async and sync drivers (``drive``).
"""

from crew.stream.events import (
    AgentTurnStarted,
    ApprovalRequested,
    RunStarted,
    StreamEvent,
    TaskFailed,
    TaskFinished,
    TaskSkipped,
    TaskStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    to_json,
)

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
