"""``crew validate`` and ``crew plot`` of a flow folder (a CrewAI flow project or a crew-native ``flow.py``).

Validate says, without running a step: what ``crew kickoff`` would refuse (``crewai`` API crew
lacks; packages and keys the flow's own modules need are warnings here, since validate needs
neither), every crew folder's problems, every listener whose trigger nothing produces and every
router label nothing waits for (located warnings), and whether the state model builds from the
inputs. Both import the flow's module (its code runs, as for a crew's ``tools.py``);
``--no-import`` keeps validate to what reading the files tells.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from crew.cli import EXIT_OK, count, llm_option


def validate(args: argparse.Namespace, flow: Any) -> int:
    from crew.cli.flow_kickoff import FlowCrews, flow_session
    from crew.cli.kickoff import _pairs
    from crew.config.flow_check import check_shape, check_state, shape_of
    from crew.config.flow_project import check_flow
    from crew.config.problems import Problems, display_path

    no_import = getattr(args, "no_import", False)
    problems = Problems()
    for problem in check_flow(flow, Problems()).items:
        refused = "CrewAI API" in problem.message
        problems.add(problem.file, problem.line, problem.path, problem.message, "error" if refused else "warning")
    _crews(flow, problems, llm_option(getattr(args, "llm", None)), no_import)
    shape = None
    if not no_import and not problems.errors:
        crews = FlowCrews(llm_option(getattr(args, "llm", None)), None, False)
        with flow_session(flow, crews) as cls:
            shape = shape_of(cls)
            check_shape(shape, problems)
            check_state(cls, _pairs(getattr(args, "inputs", [])), problems, (display_path(flow.file), flow.class_line))
    for problem in problems.of("warning"):
        print(problem, file=sys.stderr)
    problems.raise_errors()
    print(f"ok: {display_path(flow.file)}")
    kind = "CrewAI flow project" if flow.kind == "crewai" else "flow"
    steps = f", {count(len(shape.steps), 'step')}, {count(len(shape.labels), 'route label')}" if shape else ""
    print(f"  {kind} {flow.class_name}{steps}, {count(len(flow.crew_folders), 'crew')}")
    for folder in flow.crew_folders:
        print(f"  crew {display_path(folder)}")
    if no_import:
        print("  --no-import: the flow's module was not imported; its steps and state were not checked")
    for note in problems.of("note"):
        print(f"  {note}")
    return EXIT_OK


def _crews(flow: Any, problems: Any, llm: str | None, no_import: bool) -> None:
    """Each crew folder of the flow, checked as ``crew validate`` checks a crew; its problems join the flow's."""
    from crew.cli import load_project
    from crew.errors import ConfigError

    for folder in flow.crew_folders:
        try:
            project = load_project(folder, import_code=not no_import, llm=llm)
        except ConfigError as exc:
            problems.items += [_line(e) for e in exc.errors or [str(exc)]]
            continue
        problems.items += project.warnings


def _line(text: str) -> Any:
    """An error line of a crew's check as a problem of the flow's (kept as written)."""
    from crew.config.problems import Problem

    return Problem("", 0, "", text, "error")


def picture(flow: Any) -> Any:
    """The flow's steps and routes as ``crew plot`` draws a crew's tasks."""
    from crew.cli.flow_kickoff import FlowCrews, flow_session
    from crew.config.flow_check import shape_of

    with flow_session(flow, FlowCrews(None, None, False)) as cls:
        shape = shape_of(cls)
    return picture_of_shape(shape)


def picture_of_shape(shape: Any) -> Any:
    """Boxes for steps (their kind and labels under the name), arrows for what fires what."""
    from crew.cli.plot import Picture

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
    parts = [step.kind + (" on " + ", ".join(on) if on else "")]
    if step.again_on:
        parts.append("again on " + ", ".join(repr(label) for label in step.again_on))
    if step.labels or step.computed:
        parts.append("-> " + " | ".join([*step.labels, *(["..."] if step.computed else [])]))
    return ", ".join(parts)


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


__all__ = ["picture", "picture_of_shape", "validate"]
