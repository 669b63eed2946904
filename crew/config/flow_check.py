"""A flow class looked at without running it: its shape (steps, triggers, the labels routers return)
and what ``crew validate`` says about it.

A router's labels are its ``return "label"`` statements, read from its source: a listener
waiting for a label no router returns never fires, and a label no step waits for ends its
route; both are located warnings (the file and line of the step, or of the ``return``). A
router that returns a computed value is noted, not guessed at. The state model is built
from the inputs as a kickoff would build it, so a field that fails is an error here.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Any

from crew.config.problems import Problems, display_path


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
        return display_path(inspect.getsourcefile(fn) or "?"), inspect.getsourcelines(fn)[1]
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
    return labels, computed


def check_shape(shape: FlowShape, problems: Problems) -> Problems:
    """A listener waiting for a label no router returns, and a label nothing waits for: located warnings."""
    names = {s.name for s in shape.steps}
    labels = shape.labels
    computed = [s.name for s in shape.steps if s.computed]
    heard: set[str] = set()
    for step in shape.steps:
        for name in [*step.waits_for, *step.again_on]:
            heard.add(name)
            if name in names or name in labels:
                continue
            returned = ", ".join(repr(label) for label in labels) or "none"
            maybe = f"; router {', '.join(computed)} returns a computed value, which may be it" if computed else ""
            problems.add(
                step.file,
                step.line,
                step.name,
                f"step '{step.name}' waits for '{name}', which is no step and which no router returns "
                f"(labels returned: {returned}){maybe}: it never fires",
                "warning" if not computed else "note",
            )
    for label, routers in labels.items():
        if label not in heard:
            for router in routers:
                problems.add(
                    router.file,
                    router.labels[label],
                    router.name,
                    f"router '{router.name}' returns '{label}', which no step waits for: the route ends there",
                    "warning",
                )
    return problems


def check_state(flow_cls: type, inputs: dict[str, Any], problems: Problems, where: tuple[str, int]) -> None:
    """The state model built from ``inputs`` as a kickoff builds it; a field that fails is an error."""
    from crew.errors import ConfigError
    from crew.flow.state import apply_inputs

    try:
        flow = flow_cls()
        if inputs:
            apply_inputs(flow.state, inputs, getattr(flow, "flow_name", flow_cls.__name__))
    except ConfigError as exc:
        problems.add(where[0], where[1], "state", str(exc))


__all__ = ["FlowShape", "StepShape", "check_shape", "check_state", "shape_of"]
