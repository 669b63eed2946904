"""The decorators that make a method a step: ``@start``, ``@listen``, ``@router``, and ``@persist``.

Each one records what it means on the function itself (a :class:`StepSpec` under
``__crew_step__``) and returns the function unchanged, so a step stays a plain method: callable
directly, inspectable, picklable by name. ``Flow.__init_subclass__`` collects the specs of a
class and its bases (``crew.flow.steps``). Names and forms are CrewAI's, so a flow moves by
changing its imports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from crew.flow.conditions import Trigger, as_condition

__all__ = ["StepSpec", "listen", "persist", "router", "spec_of", "start"]

F = TypeVar("F", bound=Callable[..., Any])

_ATTR = "__crew_step__"


@dataclass(frozen=True, slots=True)
class StepSpec:
    """What the decorators said about one method.

    ``start``: ``True`` for ``@start()``, a trigger for ``@start("label")`` (a start that a
    router's label fires again), ``None`` for a method that is not a start. ``listen``: what it
    waits for. ``router``: its return value is a label.
    """

    start: bool | Trigger | None = None
    listen: Trigger | None = None
    router: bool = False
    persist: bool = False


def spec_of(fn: Any) -> StepSpec | None:
    return getattr(fn, _ATTR, None)


def _mark(fn: F, **changes: Any) -> F:
    target = getattr(fn, "__func__", fn)  # a staticmethod/classmethod's function
    setattr(target, _ATTR, replace(spec_of(target) or StepSpec(), **changes))
    return fn


def start(condition: Any = None) -> Callable[[F], F]:
    """A step that runs when the flow starts; ``@start("label")`` also runs when a router returns it.

    Several starts run concurrently. When a flow has no unconditional start, every labelled
    start runs at kickoff instead (as in CrewAI).
    """
    trigger = True if condition is None else as_condition(condition)
    return lambda fn: _mark(fn, start=trigger)


def listen(condition: Any) -> Callable[[F], F]:
    """A step that runs each time ``condition`` (a method, a label, ``or_``/``and_``) is met.

    When the method takes an argument it receives the output of the method that triggered it
    (for a label: the label).
    """
    trigger = as_condition(condition)
    return lambda fn: _mark(fn, listen=trigger)


def router(condition: Any) -> Callable[[F], F]:
    """A listener whose return value (a string, or an Enum's value) is a label other steps wait for."""
    trigger = as_condition(condition)
    return lambda fn: _mark(fn, listen=trigger, router=True)


def persist(target: Any = None, *_: Any, **__: Any) -> Any:
    """CrewAI's ``@persist``, accepted on a flow class or a step in all its forms (``@persist``,
    ``@persist()``, ``@persist(SomePersistence())``).

    In crew every flow run on a run store (``store=``, as for crews) is durable step by step
    (docs/flows.md), so there is nothing more to switch on: the mark is kept and changes nothing.
    """
    if isinstance(target, type) or (callable(target) and not _is_persistence(target)):
        return _persisted(target)
    return _persisted


def _is_persistence(value: Any) -> bool:
    """A persistence backend object (CrewAI's ``SQLiteFlowPersistence()``) rather than a flow or a step."""
    return hasattr(value, "save_state") or hasattr(value, "load_state")


def _persisted(target: Any) -> Any:
    if isinstance(target, type):
        target.__crew_persist__ = True
        return target
    return _mark(target, persist=True)
