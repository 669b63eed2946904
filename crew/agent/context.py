"""Context providers: what a task's prompt asks for before the task starts (memory, knowledge).

A provider is handed a :class:`ContextRequest` (the run, the task, its agent) and answers with a
:class:`PromptSection`: a title and a few items, each with where it came from and, when it was
found by a search, its id and score. The task runner asks every provider of the run once per
task, before its first attempt (``crew.run.context``), records what they answered, and the
agent's task prompt shows each section after the context of earlier tasks. When the task is
done, each provider hears of its output (memory remembers it there).

One mechanism for every kind of provided context: the prompt text is built in one place, a run
records what every provider gave, and a replayed run shows the recorded sections again instead
of asking the providers (so it recalls exactly what the first run recalled).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["ContextItem", "ContextProvider", "ContextRequest", "PromptSection"]


@dataclass(frozen=True)
class ContextItem:
    """One thing a provider puts in a prompt: its ``text``, where it came from (``source``), and,
    when a search found it, the ``id`` it has there and its ``score``."""

    text: str
    source: str = ""
    id: str = ""
    score: float | None = None

    def as_record(self) -> dict[str, Any]:
        return {"id": self.id, "score": self.score, "source": self.source, "text": self.text}

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> ContextItem:
        return cls(text=str(data.get("text", "")), source=str(data.get("source", "")), id=str(data.get("id", "")),
                   score=data.get("score"))  # fmt: skip


@dataclass(frozen=True)
class PromptSection:
    """A provider's answer: ``title`` (``"What you remember"``) over its ``items``, in the task prompt."""

    provider: str
    title: str
    items: tuple[ContextItem, ...] = ()

    def render(self) -> str:
        lines = [f"- {item.text.strip()}" + (f" ({item.source})" if item.source else "") for item in self.items]
        return f"{self.title}:\n" + "\n".join(lines)

    def as_record(self) -> dict[str, Any]:
        return {"provider": self.provider, "title": self.title, "items": [i.as_record() for i in self.items]}

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> PromptSection:
        items = tuple(ContextItem.from_record(item) for item in data.get("items") or ())
        return cls(provider=str(data.get("provider", "")), title=str(data.get("title", "")), items=items)


@dataclass(frozen=True)
class ContextRequest:
    """What a provider is asked about: one task of one run, and the agent that will work on it."""

    run_id: str | None
    task: str
    description: str
    expected_output: str
    agent: Any = None
    crew: str = "crew"
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def agent_role(self) -> str:
        return str(getattr(self.agent, "role", "") or "")

    @property
    def query(self) -> str:
        """The text to search with: the task's description and its expected output."""
        return f"{self.description}\n{self.expected_output}".strip()


@runtime_checkable
class ContextProvider(Protocol):
    """Gives a task's prompt a section before the task starts, and hears of the task's output after.

    ``name`` identifies the provider in records (``"memory"``, ``"knowledge"``). ``provide``
    returns None (or a section with no items) when it has nothing for this task.
    """

    name: str

    async def provide(self, request: ContextRequest) -> PromptSection | None: ...

    async def task_done(self, request: ContextRequest, output: Any) -> None: ...


def render_sections(sections: Sequence[PromptSection]) -> str:
    """The sections' text, one paragraph each (empty sections left out)."""
    return "\n\n".join(section.render() for section in sections if section.items)
