"""``crew plot``: the task graph as Mermaid, Graphviz DOT, or a self-contained HTML page.

The edges are the ones the scheduler waits on (``Crew.validate_graph()``), so the
picture is the run's real shape: a chain in the sequential process, a fan-out/fan-in
in the graph process. The HTML page draws the graph itself as inline SVG (one column
per topological generation), so it opens offline with nothing to load.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from crew.cli import EXIT_OK, UsageError, count, write_file
from crew.common.drawing import DELEGATED, Picture, dot, markdown, mermaid, page

FORMATS = {".mmd": "mermaid", ".mermaid": "mermaid", ".md": "markdown", ".dot": "dot", ".gv": "dot", ".html": "html"}


def run(args: argparse.Namespace) -> int:
    fmt = "mermaid"
    if args.output:
        suffix = Path(args.output).suffix.lower()
        if suffix not in FORMATS:
            raise UsageError(
                f"-o {args.output}: unknown format '{suffix or '(none)'}'; use one of " + ", ".join(FORMATS)
            )
        fmt = FORMATS[suffix]
    picture = _picture(args.path)
    text = {"mermaid": mermaid, "markdown": markdown, "dot": dot, "html": page}[fmt](picture)
    if args.output:
        write_file(args.output, text)
        print(
            f"wrote {args.output} ({count(len(picture.nodes), picture.noun)}, {count(len(picture.edges), 'edge')})",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _picture(path: str) -> Picture:
    """A flow's steps and routes, or a crew's tasks."""
    from crew.config.flow_project import find_flow

    flow = find_flow(path)
    if flow is not None:
        from crew.cli.flow_inspect import picture

        return picture(flow)
    from crew.cli import load_project

    return picture_of(load_project(path).crew)


def picture_of(crew: Any) -> Picture:
    graph = crew.validate_graph()
    agents = {name: _agent_label(task.agent) for name, task in zip(graph.names, crew.tasks, strict=True)}
    edges = [(dep, name) for name in graph.names for dep in graph.deps[name]]
    process = getattr(crew.process, "value", crew.process)
    picture = Picture(f"{crew.name} ({process})", [(n, agents[n]) for n in graph.names], edges, graph.generations)
    if process == "hierarchical":
        picture.manager = [_agent_label(a) for a in crew.agents if a is not crew.manager_agent]
        picture.delegated = [n for n in graph.names if agents[n] == DELEGATED]
    return picture


def _agent_label(agent: Any) -> str:
    return DELEGATED if agent is None else str(getattr(agent, "name", None) or agent.role)


__all__ = ["DELEGATED", "FORMATS", "Picture", "dot", "markdown", "mermaid", "page", "picture_of", "run"]
