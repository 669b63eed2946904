"""A flow class's shape, read without running it: its steps, what each waits for, the labels routers return.

A router's labels are not declared: they are its ``return "label"`` statements, read from
its source (a router that returns a computed value is marked ``computed``). ``crew validate``
checks the shape (``crew/config/flow_check.py``); ``crew plot`` and ``Flow.plot`` draw it.
"""

from __future__ import annotations

import ast
import inspect
import os
import textwrap
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass
class StepShape:
    """One step as the picture and the checks see it."""

    name: str
    kind: str  # "start", "listen" or "router"
    file: str
    line: int
    waits_for: list[str] = field(default_factory=list)  # the names in its trigger (steps or labels)
    again_on: list[str] = field(default_factory=list)  # a labelled start's labels
    labels: dict[str, int] = field(default_factory=dict)  # a router's literal labels -> line of the return
    computed: bool = False  # a router returning something other than a literal


@dataclass
class FlowShape:
    name: str
    steps: list[StepShape]

    def shown(self) -> FlowShape:
        """The same shape with each file as messages show it from the current folder."""
        steps = [replace(step, file=_shown(step.file)) for step in self.steps]
        return FlowShape(self.name, steps)

    def step(self, name: str) -> StepShape | None:
        return next((s for s in self.steps if s.name == name), None)

    @property
    def labels(self) -> dict[str, list[StepShape]]:
        """Every literal label, and the routers that return it."""
        out: dict[str, list[StepShape]] = {}
        for step in self.steps:
            for label in step.labels:
                out.setdefault(label, []).append(step)
        return out


def shape_of(flow_cls: type) -> FlowShape:
    """The steps of a ``crew.flow.Flow`` subclass, in definition order, with what each waits for."""
    from crew.flow.conditions import names_in
    from crew.flow.steps import Steps

    steps = Steps.of(flow_cls)
    out = []
    for step in steps.by_name.values():
        file, line = _where(step.fn)
        kind = "router" if step.spec.router else "start" if step.spec.start is not None else "listen"
        shape = StepShape(step.name, kind, file, line)
        if step.spec.listen is not None:
            shape.waits_for = list(dict.fromkeys(names_in(step.spec.listen)))
        if step.start_trigger is not None:
            shape.again_on = list(dict.fromkeys(names_in(step.start_trigger)))
        if step.spec.router:
            shape.labels, shape.computed = _returned_labels(step.fn, line)
        out.append(shape)
    out.sort(key=lambda s: (s.file, s.line))
    return FlowShape(getattr(flow_cls, "name", None) or flow_cls.__name__, out)


def _where(fn: Any) -> tuple[str, int]:
    try:
        return inspect.getsourcefile(fn) or "?", inspect.getsourcelines(fn)[1]
    except (OSError, TypeError):
        return "?", 0


def _returned_labels(fn: Any, first_line: int) -> tuple[dict[str, int], bool]:
    """A router's ``return "label"`` statements (label -> line), and whether it returns anything else."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return {}, True
    labels: dict[str, int] = {}
    computed = False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            # the source starts at the first decorator, as first_line does
            labels.setdefault(value.value, first_line + node.lineno - 1)
        elif not (isinstance(value, ast.Constant) and value.value is None):
            computed = True
    return dict(sorted(labels.items(), key=lambda item: item[1])), computed


def _shown(path: str) -> str:
    """A source path as messages show it: relative to the current folder when inside it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


__all__ = ["FlowShape", "StepShape", "shape_of"]
