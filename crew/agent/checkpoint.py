"""Where an agent's task stopped to wait for a person, written down so it can go on later.

When a turn's tool calls come back with one still ``pending`` (its tool requires
approval and nobody has decided), the task cannot go on, and redoing its model calls
later would cost money and might not even ask for the same call again. So the loop
raises :class:`TaskPaused` carrying a :class:`TaskCheckpoint`: the conversation as it was
before that turn, the turn's model replies, the results of the calls that did run, and the
calls that wait. Continuing (``Crew.resume``, possibly in another process hours later)
restores the conversation and *replays* the turn: the saved replies stand in for the model
calls, the finished calls keep their results, each waiting call is decided and, if
approved, runs once. Every field is plain data (JSON through pydantic), so a run store
keeps it as it is.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from crew.agent.transcript import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from crew.models.base import LLMResponse
from crew.tasks.output import ToolCallRecord
from crew.tools.approval import ApprovalRequest
from crew.tools.messages import ToolResult

__all__ = ["TaskCheckpoint", "restore_messages", "save_messages"]


class TaskCheckpoint(BaseModel):
    """An agent's task, stopped at the turn whose tool calls wait for approval."""

    task: str
    agent: str
    turn: int
    messages: list[dict[str, Any]]
    """The conversation before the turn (provider format)."""
    responses: list[LLMResponse]
    """The model replies of the turn, in the order the loop asked for them."""
    results: dict[str, ToolResult] = Field(default_factory=dict)
    """The turn's calls that ran (or were refused or denied), by call id."""
    pending: list[ApprovalRequest] = Field(default_factory=list)
    records: list[ToolCallRecord] = Field(default_factory=list)
    """The task's tool call records before the turn."""
    call_ids: list[str] = Field(default_factory=list)
    """The turn's call ids in order: a call read from text gets a new id each time it is read."""
    corrected: bool = False
    """The turn before this one was answered with a format correction (text mode)."""
    empty_turn: int | None = None


def save_messages(messages: list[Message]) -> list[dict[str, Any]]:
    return [message.to_wire() for message in messages]


def restore_messages(wire: list[dict[str, Any]]) -> list[Message]:
    """The typed messages of a saved conversation (an assistant message goes back exactly as saved)."""
    out: list[Message] = []
    for item in wire:
        role = item.get("role")
        if role == "system":
            out.append(SystemMessage(item.get("content") or ""))
        elif role == "user":
            out.append(UserMessage(item.get("content") or ""))
        elif role == "tool":
            out.append(ToolMessage(str(item.get("tool_call_id") or ""), item.get("content") or ""))
        elif role == "assistant":
            out.append(AssistantMessage(item.get("content"), wire=dict(item)))
        else:
            raise ValueError(f"a saved conversation holds a message of unknown role {role!r}")
    return out
