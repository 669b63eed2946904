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
    from crew.cli.inputs import input_pairs
    from crew.config.flow_check import check_shape, check_state
    from crew.config.flow_project import check_flow
    from crew.config.problems import Problems, display_path
    from crew.flow.shape import shape_of

    no_import = getattr(args, "no_import", False)
    problems = Problems()
    for problem in check_flow(flow, Problems()).items:
        refused = "CrewAI API" in problem.message
        problems.add(problem.file, problem.line, problem.path, problem.message, "error" if refused else "warning")
    _crews(flow, problems, llm_option(getattr(args, "llm", None)), no_import)
    shape = None
    missing = [p for p in problems.items if "which is not installed" in p.message]
    if not no_import and not problems.errors and not missing:
        crews = FlowCrews(llm_option(getattr(args, "llm", None)), None)
        where = (display_path(flow.file), flow.class_line)  # here, not from the project's root
        with flow_session(flow, crews) as cls:
            shape = shape_of(cls)
            check_state(cls, input_pairs(getattr(args, "inputs", [])), problems, where)
        check_shape(shape.shown(), problems)
    problems.raise_errors()  # with the warnings, when there is an error
    for problem in problems.of("warning"):
        print(problem, file=sys.stderr)
    print(f"ok: {display_path(flow.file)}")
    kind = "CrewAI flow project" if flow.kind == "crewai" else "flow"
    steps = f", {count(len(shape.steps), 'step')}, {count(len(shape.labels), 'route label')}" if shape else ""
    print(f"  {kind} {flow.class_name}{steps}, {count(len(flow.crew_folders), 'crew')}")
    for folder in flow.crew_folders:
        print(f"  crew {display_path(folder)}")
    if no_import or missing:
        why = "--no-import" if no_import else "a package it imports is not installed (above)"
        print(f"  {why}: the flow's module was not imported; its steps and state were not checked")
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
    from crew.flow.plot import picture_of_shape
    from crew.flow.shape import shape_of

    with flow_session(flow, FlowCrews(None, None)) as cls:
        shape = shape_of(cls)
    return picture_of_shape(shape)


__all__ = ["picture", "validate"]
