"""An agent's conversation with its model, as typed messages.

The loop appends :class:`SystemMessage`, :class:`UserMessage`, :class:`AssistantMessage`
and :class:`ToolMessage` objects and reads them back by their fields; the provider's
format (OpenAI-style dicts, which every transport translates from) is made only when a
model is called, by :meth:`Transcript.wire`. Each message is converted once, the first
time it is sent, so a turn costs its new messages, not the whole history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crew.models.base import InvalidToolCall, LLMResponse, assistant_message
from crew.tools.messages import ToolCall

__all__ = ["AssistantMessage", "Message", "SystemMessage", "ToolMessage", "Transcript", "UserMessage"]


@dataclass(slots=True)
class SystemMessage:
    content: str

    def to_wire(self) -> dict[str, Any]:
        return {"role": "system", "content": self.content}


@dataclass(slots=True)
class UserMessage:
    content: str

    def to_wire(self) -> dict[str, Any]:
        return {"role": "user", "content": self.content}


@dataclass(slots=True)
class AssistantMessage:
    """What the model said: text and/or tool calls (invalid ones too: their ids must be answered).

    ``wire``, when the reply came with one, is the provider-format message the model sent
    (``LLMResponse.raw_message``): it goes back as it came, extra fields included.
    """

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    invalid_tool_calls: tuple[InvalidToolCall, ...] = ()
    wire: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, response: LLMResponse) -> AssistantMessage:
        return cls(
            response.content, tuple(response.tool_calls), tuple(response.invalid_tool_calls), response.raw_message
        )

    def to_wire(self) -> dict[str, Any]:
        if self.wire is not None:
            return self.wire
        return assistant_message(self.content, self.tool_calls, self.invalid_tool_calls)


@dataclass(slots=True)
class ToolMessage:
    """A tool's result (or the error about an unreadable call), answering the call ``call_id``."""

    call_id: str
    content: str

    def to_wire(self) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": self.call_id, "content": self.content}


Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage


class Transcript:
    """The messages of one agent run, in order; each converted to the wire format when first sent."""

    __slots__ = ("_wire", "messages")

    def __init__(self, *messages: Message) -> None:
        self.messages: list[Message] = []
        self._wire: list[dict[str, Any]] = []
        for message in messages:
            self.append(message)

    def append(self, message: Message) -> None:
        self.messages.append(message)

    def wire(self) -> list[dict[str, Any]]:
        """The OpenAI-format messages, a fresh list per call (a model may keep what it was sent)."""
        wire, messages = self._wire, self.messages
        for message in messages[len(wire) :]:
            wire.append(message.to_wire())
        return list(wire)

    def __len__(self) -> int:
        return len(self.messages)
