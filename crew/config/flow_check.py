"""What ``crew validate`` says about a flow class's shape (``crew/flow/shape.py``) and its state.

A listener waiting for a label no router returns never fires, and a label no step waits
for ends its route: both are located warnings (the file and line of the step, or of the
``return``). A router that returns a computed value makes the first a note, not a guess.
The state model is built from the inputs as a kickoff would build it, so a field that
fails is an error here.
"""

from __future__ import annotations

from typing import Any

from crew.config.problems import Problems
from crew.flow.shape import FlowShape


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


__all__ = ["check_shape", "check_state"]
