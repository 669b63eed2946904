"""A flow class read once: its steps, what each waits for, and who waits for each name.

``Steps.of(cls)`` collects the methods the decorators marked (bases first, a subclass's
override wins), checks that every trigger names a step or a label some router may return
(a located :class:`~crew.errors.FlowDefinitionError` otherwise), and indexes listeners by the
names they mention, so finding who fires on an event does not scan every step.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from crew.flow.asking import FeedbackSpec, feedback_of
from crew.flow.conditions import Trigger, names_in
from crew.flow.decorators import StepSpec, spec_of

__all__ = ["Step", "Steps"]


@dataclass(frozen=True, slots=True)
class Step:
    """One step: its name, function, spec, and how it is called."""

    name: str
    fn: Callable[..., Any]
    spec: StepSpec
    takes_input: bool
    is_async: bool
    feedback: FeedbackSpec | None = None
    """``@human_feedback``: a person is asked about the output before it is handed on."""

    @property
    def routes(self) -> bool:
        """Its output names a label: a ``@router``, or a ``@human_feedback`` step with outcomes."""
        return self.spec.router or (self.feedback is not None and self.feedback.emit is not None)

    @property
    def start_trigger(self) -> Trigger | None:
        """The label trigger of a labelled start (``@start("label")``), else None."""
        start = self.spec.start
        return None if start is None or start is True else start  # type: ignore[return-value]

    @property
    def where(self) -> str:
        """``file:line`` of the step's definition, for messages."""
        try:
            return f"{inspect.getsourcefile(self.fn)}:{inspect.getsourcelines(self.fn)[1]}"
        except (OSError, TypeError):
            return self.fn.__qualname__


@dataclass
class Steps:
    """The steps of one flow class, indexed by the names that fire them."""

    by_name: dict[str, Step]
    starts: list[str]
    """Steps run at kickoff: the unconditional starts, or every start when there is none."""
    listeners: dict[str, list[str]] = field(default_factory=dict)
    """Event name -> steps whose ``listen`` condition mentions it."""
    labelled_starts: dict[str, list[str]] = field(default_factory=dict)
    """Label -> labelled starts whose condition mentions it."""

    @classmethod
    def of(cls, flow_cls: type) -> Steps:
        found = _collect(flow_cls)
        starts = [s.name for s in found.values() if s.spec.start is True]
        if not starts:
            starts = [s.name for s in found.values() if s.spec.start is not None]
        steps = cls(by_name=found, starts=starts)
        for step in found.values():
            for trigger, index in ((step.spec.listen, steps.listeners), (step.start_trigger, steps.labelled_starts)):
                for name in dict.fromkeys(names_in(trigger)) if trigger is not None else ():
                    index.setdefault(name, []).append(step.name)
        return steps

    @property
    def routers(self) -> list[Step]:
        return [s for s in self.by_name.values() if s.routes]

    def unknown_triggers(self) -> list[tuple[Step, str]]:
        """(step, name) for each listener's trigger name that is neither a step nor a possible label.

        A router's labels are not declared (only its return value says), so with any router in
        the flow a name that is not a step counts as a label; without one it is a mistake.
        """
        if self.routers:
            return []
        return [
            (step, name)
            for step in self.by_name.values()
            if step.spec.listen is not None
            for name in names_in(step.spec.listen)
            if name not in self.by_name
        ]


def _collect(flow_cls: type) -> dict[str, Step]:
    """The decorated methods of ``flow_cls`` and its bases, a subclass's definition winning."""
    found: dict[str, Step] = {}
    for klass in reversed(flow_cls.__mro__):
        for name, value in vars(klass).items():
            fn = getattr(value, "__func__", value)
            spec = spec_of(fn)
            if spec is not None and (spec.start is not None or spec.listen is not None):
                found[name] = _step(name, fn, spec)
            elif name in found:  # overridden by an undecorated method: no longer a step
                del found[name]
    return found


def _step(name: str, fn: Callable[..., Any], spec: StepSpec) -> Step:
    params = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
    takes = any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in params)
    async_ = inspect.iscoroutinefunction(fn)
    return Step(name=name, fn=fn, spec=spec, takes_input=takes, is_async=async_, feedback=feedback_of(fn))
