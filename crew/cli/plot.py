"""``crew plot``: the task graph as Mermaid, Graphviz DOT, or a self-contained HTML page.

The edges are the ones the scheduler waits on (``Crew.validate_graph()``), so the
picture is the run's real shape: a chain in the sequential process, a fan-out/fan-in
in the graph process. The HTML page draws the graph itself as inline SVG (one column
per topological generation), so it opens offline with nothing to load.
"""

from __future__ import annotations

import argparse
import html
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crew.cli import EXIT_OK, UsageError, count, write_file

FORMATS = {".mmd": "mermaid", ".mermaid": "mermaid", ".md": "markdown", ".dot": "dot", ".gv": "dot", ".html": "html"}


@dataclass
class Picture:
    """What every format draws: tasks (name, agent), edges, and the columns of the layout."""

    title: str
    nodes: list[tuple[str, str]]
    edges: list[tuple[str, str]]
    columns: list[list[str]]


def run(args: argparse.Namespace) -> int:
    fmt = "mermaid"
    if args.output:
        suffix = Path(args.output).suffix.lower()
        if suffix not in FORMATS:
            raise UsageError(
                f"-o {args.output}: unknown format '{suffix or '(none)'}'; use one of " + ", ".join(FORMATS)
            )
        fmt = FORMATS[suffix]
    from crew.cli import load_project

    picture = picture_of(load_project(args.path).crew)
    text = {"mermaid": mermaid, "markdown": markdown, "dot": dot, "html": page}[fmt](picture)
    if args.output:
        write_file(args.output, text)
        print(
            f"wrote {args.output} ({count(len(picture.nodes), 'task')}, {count(len(picture.edges), 'edge')})",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)
    return EXIT_OK


def picture_of(crew: Any) -> Picture:
    graph = crew.validate_graph()
    agents = {}
    for name, task in zip(graph.names, crew.tasks, strict=True):
        agent = task.agent
        agents[name] = "manager" if agent is None else str(getattr(agent, "name", None) or agent.role)
    edges = [(dep, name) for name in graph.names for dep in graph.deps[name]]
    process = getattr(crew.process, "value", crew.process)
    return Picture(f"{crew.name} ({process})", [(n, agents[n]) for n in graph.names], edges, graph.generations)


def _ids(picture: Picture) -> dict[str, str]:
    """Node ids safe in every syntax (task names may hold spaces or dashes)."""
    return {name: f"t{i}" for i, (name, _) in enumerate(picture.nodes)}


def mermaid(picture: Picture) -> str:
    import json

    ids = _ids(picture)
    # The title sits in YAML front matter: a JSON string is valid YAML whatever it holds.
    lines = ["---", f"title: {json.dumps(picture.title, ensure_ascii=False)}", "---", "flowchart LR"]
    for name, agent in picture.nodes:
        lines.append(f'    {ids[name]}["{_mermaid_text(name)}<br/><small>{_mermaid_text(agent)}</small>"]')
    lines += [f"    {ids[a]} --> {ids[b]}" for a, b in picture.edges]
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    """Text for a Mermaid label: its entity codes, so quotes and markup stay literal."""
    codes = {'"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;", "#": "#35;"}
    return "".join(codes.get(char, char) for char in " ".join(text.split()))


def markdown(picture: Picture) -> str:
    return f"# {picture.title}\n\n```mermaid\n{mermaid(picture)}```\n"


def dot(picture: Picture) -> str:
    ids = _ids(picture)

    def quote(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    lines = [
        "digraph crew {",
        f"    label={quote(picture.title)};",
        "    rankdir=LR;",
        '    node [shape=box, style="rounded,filled", fillcolor="#eef3fb", fontname="Helvetica"];',
    ]
    for name, agent in picture.nodes:
        lines.append(f"    {ids[name]} [label={quote(name + chr(10) + agent)}];")
    lines += [f"    {ids[a]} -> {ids[b]};" for a, b in picture.edges]
    return "\n".join(lines) + "\n}\n"


def page(picture: Picture) -> str:
    box_w = max(140, 8 * max((max(len(n), len(a)) for n, a in picture.nodes), default=10) + 24)
    box_h, gap_x, gap_y, margin = 52, 70, 22, 24
    rows = max((len(c) for c in picture.columns), default=1)
    width = margin * 2 + len(picture.columns) * box_w + max(len(picture.columns) - 1, 0) * gap_x
    height = margin * 2 + rows * box_h + (rows - 1) * gap_y
    where: dict[str, tuple[int, int]] = {}
    for col, names in enumerate(picture.columns):
        offset = (rows - len(names)) * (box_h + gap_y) // 2
        for row, name in enumerate(names):
            where[name] = (margin + col * (box_w + gap_x), margin + offset + row * (box_h + gap_y))
    agents = dict(picture.nodes)
    shapes = []
    for a, b in picture.edges:
        (x1, y1), (x2, y2) = where[a], where[b]
        x1, y1, y2 = x1 + box_w, y1 + box_h // 2, y2 + box_h // 2
        mid = (x1 + x2) // 2
        shapes.append(
            f'<path d="M{x1},{y1} C{mid},{y1} {mid},{y2} {x2 - 4},{y2}" class="edge" marker-end="url(#arrow)"/>'
        )
    for name, (x, y) in where.items():
        shapes.append(
            f'<g class="task"><title>{html.escape(name)}</title>'
            f'<rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" rx="8"/>'
            f'<text x="{x + box_w // 2}" y="{y + 22}" class="name">{html.escape(name)}</text>'
            f'<text x="{x + box_w // 2}" y="{y + 40}" class="agent">{html.escape(agents[name])}</text></g>'
        )
    title = html.escape(picture.title)
    summary = (
        f"{count(len(picture.nodes), 'task')}, {count(len(picture.edges), 'dependency', 'dependencies')}; "
        "arrows point from a task to the tasks that wait for it."
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem; color: #1d2733; }}
.edge {{ fill: none; stroke: #7a8aa0; stroke-width: 1.6; }}
.task rect {{ fill: #eef3fb; stroke: #4a6fa5; stroke-width: 1.4; }}
.task text {{ text-anchor: middle; }}
.name {{ font-weight: 600; font-size: 14px; }}
.agent {{ font-size: 12px; fill: #5b6b7f; }}
</style></head>
<body><h1>{title}</h1>
<p>{summary}</p>
<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto">
<path d="M0,0 L10,5 L0,10 z" fill="#7a8aa0"/></marker></defs>
{chr(10).join(shapes)}
</svg></body></html>
"""
