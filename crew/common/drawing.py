"""The project's one drawing of boxes and arrows: Mermaid, Graphviz DOT, or a self-contained HTML page.

``crew plot`` draws crews and flows with it, and ``Flow.plot()`` the same HTML page; it sits in
the common layer so both import it downward (it imports nothing of crew).

A ``Picture`` holds what every format draws (boxes with a name and a line under it, arrows,
the columns of the layout); the HTML page draws it as inline SVG, one column per generation,
so it opens offline with nothing to load.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 task``, ``2 tasks`` (``crew.cli.count``'s twin: the drawing imports nothing of crew)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


DELEGATED = "assigned by the manager"
"""The agent line of a hierarchical crew's task that names no agent: the manager picks one at run time."""


@dataclass
class Picture:
    """What every format draws: tasks (name, agent), edges, and the columns of the layout.

    ``manager`` (hierarchical crews) names the agents the manager delegates to; ``delegated``
    are the tasks it assigns (those naming no agent).
    """

    title: str
    nodes: list[tuple[str, str]]
    edges: list[tuple[str, str]]
    columns: list[list[str]]
    manager: list[str] | None = None
    delegated: list[str] = field(default_factory=list)
    noun: str = "task"
    """What a box is: a crew's task, or a flow's step."""


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
    if picture.manager is not None:
        workers = _mermaid_text(", ".join(picture.manager))
        lines.append(f'    manager(["manager<br/><small>delegates to {workers}</small>"])')
        lines += [f"    manager -.-> {ids[name]}" for name in picture.delegated]
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
    if picture.manager is not None:
        label = quote("manager" + chr(10) + "delegates to " + ", ".join(picture.manager))
        lines.append(f'    manager [label={label}, shape=ellipse, fillcolor="#fdf3e1"];')
        lines += [f"    manager -> {ids[name]} [style=dashed];" for name in picture.delegated]
    return "\n".join(lines) + "\n}\n"


@dataclass(frozen=True)
class _Layout:
    """Where the page draws each box: columns of boxes, centred vertically."""

    box_w: int
    box_h: int = 52
    gap_x: int = 70
    gap_y: int = 22
    margin: int = 24

    def column_x(self, col: int) -> int:
        return self.margin + col * (self.box_w + self.gap_x)


def page(picture: Picture) -> str:
    box_w = max(140, 8 * max((max(len(n), len(a)) for n, a in picture.nodes), default=10) + 24)
    layout = _Layout(box_w)
    rows = max((len(c) for c in picture.columns), default=1)
    width = layout.margin * 2 + len(picture.columns) * box_w + max(len(picture.columns) - 1, 0) * layout.gap_x
    height = layout.margin * 2 + rows * layout.box_h + (rows - 1) * layout.gap_y
    where: dict[str, tuple[int, int]] = {}
    for col, names in enumerate(picture.columns):
        offset = (rows - len(names)) * (layout.box_h + layout.gap_y) // 2
        for row, name in enumerate(names):
            where[name] = (layout.column_x(col), layout.margin + offset + row * (layout.box_h + layout.gap_y))
    agents = dict(picture.nodes)
    shapes = [_edge(layout, picture.columns, where, a, b) for a, b in picture.edges]
    for name, (x, y) in where.items():
        shapes.append(
            f'<g class="task"><title>{html.escape(name)}</title>'
            f'<rect x="{x}" y="{y}" width="{box_w}" height="{layout.box_h}" rx="8"/>'
            f'<text x="{x + box_w // 2}" y="{y + 22}" class="name">{html.escape(name)}</text>'
            f'<text x="{x + box_w // 2}" y="{y + 40}" class="agent">{html.escape(agents[name])}</text></g>'
        )
    title = html.escape(picture.title)
    summary = (
        f"{count(len(picture.nodes), picture.noun)}, {count(len(picture.edges), 'dependency', 'dependencies')}; "
        f"arrows point from a {picture.noun} to the {picture.noun}s that wait for it."
    )
    if picture.manager is not None:
        workers = html.escape(", ".join(picture.manager))
        summary += f" The manager assigns each task marked '{DELEGATED}' to one of: {workers}."
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


def _edge(layout: _Layout, columns: list[list[str]], where: dict[str, tuple[int, int]], a: str, b: str) -> str:
    """An arrow from ``a``'s right side to ``b``'s left, passing the columns between through the gaps
    between their boxes (a straight line across would run through a box of such a column)."""
    (x1, y1), (x2, y2) = where[a], where[b]
    mid_h = layout.box_h // 2
    points = [(x1 + layout.box_w, y1 + mid_h)]
    first, last = _column_of(columns, a), _column_of(columns, b)
    for col in range(first + 1, last):
        x = layout.column_x(col)
        share = (x - points[0][0]) / max(x2 - points[0][0], 1)
        y = _free_y(layout, [where[n][1] for n in columns[col]], round(y1 + mid_h + share * (y2 - y1)))
        points += [(x, y), (x + layout.box_w, y)]
    points.append((x2 - 4, y2 + mid_h))
    path = f"M{points[0][0]},{points[0][1]}"
    for i, (x, y) in enumerate(points[1:], start=1):
        px, py = points[i - 1]
        if i % 2 == 0:  # across a column, in its gap
            path += f" L{x},{y}"
        else:
            mid = (px + x) // 2
            path += f" C{mid},{py} {mid},{y} {x},{y}"
    return f'<path d="{path}" class="edge" marker-end="url(#arrow)"/>'


def _column_of(columns: list[list[str]], name: str) -> int:
    return next(i for i, names in enumerate(columns) if name in names)


def _free_y(layout: _Layout, tops: list[int], wanted: int) -> int:
    """``wanted``, or the nearest height between (or around) the column's boxes when it hits one."""
    spare = min(layout.gap_y, layout.margin) // 2
    if all(not (top - spare <= wanted <= top + layout.box_h + spare) for top in tops):
        return wanted
    free = [min(tops) - spare] + [top + layout.box_h + layout.gap_y // 2 for top in sorted(tops)[:-1]]
    free.append(max(tops) + layout.box_h + spare)
    return min(free, key=lambda y: abs(y - wanted))
