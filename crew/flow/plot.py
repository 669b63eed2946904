"""``Flow.plot(filename)``: the flow's steps, routes and labels as an HTML page, drawn as ``crew plot`` draws.

The boxes are the steps (under each name: start, listen on a label, router and the labels it
returns, "again on" for a loop's way back); the arrows go from a step to the steps it fires.
The drawing is ``crew/common/drawing.py``'s, the one the ``crew plot`` command uses for crews and
flows, so a flow's picture and a crew's read alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crew.flow.shape import FlowShape, shape_of


def plot(flow_cls: type, filename: str = "crew_flow") -> str:
    """Write ``filename`` (``.html`` added when it has no suffix) and return its path."""
    from crew.common.drawing import page

    path = Path(filename if Path(filename).suffix else f"{filename}.html")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page(picture_of_shape(shape_of(flow_cls))), encoding="utf-8")
    return str(path)


def picture_of_shape(shape: FlowShape) -> Any:
    """Boxes for steps (their kind and labels under the name), arrows for what fires what."""
    from crew.common.drawing import Picture  # the one drawing of the project, shared with `crew plot`

    labels = shape.labels
    names = [s.name for s in shape.steps]
    nodes = [(s.name, _subtitle(s, set(names))) for s in shape.steps]
    edges: list[tuple[str, str]] = []
    for step in shape.steps:
        for name in step.waits_for:
            sources = [name] if name in names else [r.name for r in labels.get(name, [])]
            # an arrow back to an earlier step (a loop) is said under that step instead ("again on ...")
            edges += [(a, step.name) for a in sources if names.index(a) < names.index(step.name)]
    edges = list(dict.fromkeys(edges))
    return Picture(f"{shape.name} (flow)", nodes, edges, _columns(names, edges), noun="step")


def _subtitle(step: Any, names: set[str]) -> str:
    """``start``, ``listen on 'label'``, ``router -> a | b``, and ``again on 'label'`` for a loop's way back."""
    on = [repr(n) for n in step.waits_for if n not in names]
    head = step.kind + (" on " + ", ".join(on) if on else "")
    if step.labels or step.computed:
        head += " -> " + " | ".join([*step.labels, *(["..."] if step.computed else [])])
    if step.again_on:
        head += ", again on " + ", ".join(repr(label) for label in step.again_on)
    return head


def _columns(names: list[str], edges: list[tuple[str, str]]) -> list[list[str]]:
    """Each step in the column after the furthest step that fires it (edges that close a loop are not counted)."""
    depth = dict.fromkeys(names, 0)
    for _ in names:  # longest path by relaxation; at most len(names) rounds for a DAG
        changed = False
        for a, b in edges:
            if names.index(a) < names.index(b) and depth[b] < depth[a] + 1:
                depth[b], changed = depth[a] + 1, True
        if not changed:
            break
    columns: list[list[str]] = [[] for _ in range(max(depth.values(), default=0) + 1)]
    for name in names:
        columns[depth[name]].append(name)
    return columns


__all__ = ["picture_of_shape", "plot"]
