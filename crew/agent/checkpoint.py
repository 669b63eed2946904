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

:class:`Pausing` is the loop's side of it: the checkpoint written when a turn must wait, and
the run put back where it stopped (``AgentTaskRun`` inherits it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from crew.agent.transcript import AssistantMessage, Message, SystemMessage, ToolMessage, Transcript, UserMessage
from crew.models.base import LLMResponse
from crew.tasks.output import ToolCallRecord
from crew.tools.approval import ApprovalRequest
from crew.tools.messages import ToolCall, ToolResult

__all__ = ["Pausing", "TaskCheckpoint", "restore_messages", "save_messages"]


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


class Pausing:
    """How a task's run pauses for approval and goes on: ``AgentTaskRun`` (``crew.agent.loop``)
    inherits these; they read and write the run's own record of its current turn."""

    if TYPE_CHECKING:  # the run's fields these use (set by AgentTaskRun)
        agent: Any
        scope: Any
        task_name: str
        transcript: Transcript
        records: list[ToolCallRecord]
        empty_turn: int | None
        corrected: bool
        checkpoint: TaskCheckpoint | None
        _turn_mark: tuple[int, int, bool]
        _turn_replies: list[LLMResponse]
        _replies: list[LLMResponse]
        _known_results: dict[str, ToolResult] | None
        _known_ids: list[str]

    def _checkpoint(self, calls: Sequence[ToolCall], results: Sequence[ToolResult]) -> TaskCheckpoint:
        turn, before, corrected = self._turn_mark
        pending = [
            ApprovalRequest(
                call_id=call.id,
                tool=result.name,
                args=call.args,
                agent=self.agent.role,
                task=self.task_name,
                run_id=self.scope.run_id,
            )
            for call, result in zip(calls, results, strict=True)
            if result.pending
        ]
        return TaskCheckpoint(
            task=self.task_name,
            agent=self.agent.role,
            turn=turn,
            messages=save_messages(self.transcript.messages[:before]),
            responses=list(self._turn_replies),
            results={r.tool_call_id: r for r in results if not r.pending},
            pending=pending,
            records=list(self.records),
            call_ids=[call.id for call in calls],
            corrected=corrected,
            empty_turn=self.empty_turn,
        )

    def _restore(self) -> int:
        """Go back to where the checkpoint stopped; returns the turn before the one to replay."""
        checkpoint = self.checkpoint
        assert checkpoint is not None
        self.transcript = Transcript(*restore_messages(checkpoint.messages))
        self.records = list(checkpoint.records)
        self.empty_turn = checkpoint.empty_turn
        self.corrected = checkpoint.corrected  # the replayed turn reads its reply as it did before the pause
        self._replies = list(checkpoint.responses)
        self._known_results = dict(checkpoint.results)
        self._known_ids = list(checkpoint.call_ids)
        self.scope.checkpoints.pop(self.task_name, None)  # used once: a retry starts afresh
        return checkpoint.turn - 1


async def replayed(response: LLMResponse) -> LLMResponse:
    return response
