"""What a step waits for: a method's name, a router's label, or ``or_``/``and_`` of those, nested.

A trigger is written as CrewAI writes it (a method, its name, a label, ``or_(...)``,
``and_(...)``) and kept as a :class:`Condition` tree of names. Methods finishing and routers
choosing labels are *events* in one namespace of names; a step's condition is checked against
the names it has seen since it last fired (:class:`Waiting`), so ``and_(a, b)`` fires once both
have happened, in either order, and starts waiting afresh after firing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from crew.errors import FlowDefinitionError

__all__ = ["Condition", "Trigger", "and_", "as_condition", "names_in", "or_", "satisfied"]


@dataclass(frozen=True, slots=True)
class Condition:
    """``or_``/``and_`` over names and nested conditions."""

    kind: Literal["or", "and"]
    parts: tuple[str | Condition, ...]

    def __repr__(self) -> str:
        return f"{self.kind}_({', '.join(repr(p) for p in self.parts)})"


Trigger = str | Condition
"""A normalised trigger: one name, or a condition tree of names."""


def or_(*triggers: Any) -> Condition:
    """Fires each time any of ``triggers`` happens (CrewAI 1.15 fires only on the first: docs/flows.md)."""
    return _tree("or", triggers)


def and_(*triggers: Any) -> Condition:
    """Fires once all of ``triggers`` have happened since it last fired."""
    return _tree("and", triggers)


def _tree(kind: Literal["or", "and"], triggers: tuple[Any, ...]) -> Condition:
    if not triggers:
        raise FlowDefinitionError(f"{kind}_() needs at least one method or label")
    return Condition(kind, tuple(as_condition(t) for t in triggers))


def as_condition(trigger: Any) -> Trigger:
    """A name or a condition tree from anything a decorator accepts.

    Also CrewAI's own shape, ``{"type": "OR"|"AND", "conditions": [...]}``, so a flow written
    against ``crewai.flow`` and handed here keeps its meaning.
    """
    if isinstance(trigger, str | Condition):
        return trigger
    name = getattr(trigger, "__name__", None)
    if callable(trigger) and isinstance(name, str):
        return name
    if isinstance(trigger, dict) and str(trigger.get("type", "")).lower() in ("or", "and"):
        kind: Literal["or", "and"] = "or" if str(trigger["type"]).lower() == "or" else "and"
        return _tree(kind, tuple(trigger.get("conditions") or ()))
    raise FlowDefinitionError(
        f"a flow trigger must be a method, a method's name, a router label or or_()/and_(), not {trigger!r}"
    )


def satisfied(condition: Trigger, seen: set[str]) -> bool:
    """Whether ``condition`` holds given the event names in ``seen``."""
    if isinstance(condition, str):
        return condition in seen
    combine = all if condition.kind == "and" else any
    return combine(satisfied(part, seen) for part in condition.parts)


def names_in(condition: Trigger) -> Iterator[str]:
    """Every name a condition mentions, in order."""
    if isinstance(condition, str):
        yield condition
        return
    for part in condition.parts:
        yield from names_in(part)
