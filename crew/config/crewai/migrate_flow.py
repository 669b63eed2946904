"""``crew migrate`` of a CrewAI flow project: a crew-native flow folder.

The folder (default ``<project>/crew_native``) holds ``flow.py``, the project's ``main.py``
with its ``crewai`` imports turned into ``crew.flow`` ones, and one crew folder per crew
(``crew.yaml`` + ``tools.py``, written by ``migrate.py`` as for any CrewAI crew). Each
``from .crews.x.x_crew import XCrew`` becomes a small class of the same name whose
``crew()`` loads that folder, so the steps read as they did: ``XCrew().crew().kickoff(
inputs=...)``. The project's other modules (its types, its helpers) stay where they are
and are imported from its source folder, as the migrated crews' tools are. The rest of
``main.py`` is copied line for line, comments included.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crew.errors import ConfigError

_TO_CREW_FLOW = {"crewai.flow", "crewai.flow.flow", "crewai.flow.persistence"}


@dataclass
class FlowMigration:
    folder: Path
    written: list[Path] = field(default_factory=list)
    crews: list[Any] = field(default_factory=list)  # each crew's ``Migration``
    refused: list[str] = field(default_factory=list)


def migrate_flow(flow: Any, out: str | Path | None = None) -> FlowMigration:
    """Write the CrewAI flow project ``flow`` (a ``FlowProject``) as a crew-native flow folder."""
    from crew.config.crewai.migrate import migrate
    from crew.config.flow_project import check_flow
    from crew.config.problems import Problems

    refused = [str(p) for p in check_flow(flow, Problems()).errors if "CrewAI API" in p.message]
    if refused:
        raise ConfigError("\n".join(refused), errors=refused)
    target = Path(out) if out is not None else flow.folder / "crew_native"
    if target.is_symlink() or (out is None and not target.resolve().is_relative_to(flow.folder.resolve())):
        raise ConfigError(f"{target} is a symbolic link out of the project; choose the folder with -o DIR")
    if (target / "flow.py").exists():
        raise ConfigError(f"{target} already holds flow.py; choose another folder with -o DIR")
    names = {classes[0]: file.parent.name for file, classes in flow.crew_files.values()}
    migration = FlowMigration(target)
    for file, _classes in flow.crew_files.values():
        migration.crews.append(migrate(file.parent, target / file.parent.name))
    target.mkdir(parents=True, exist_ok=True)
    flow_py = target / "flow.py"
    flow_py.write_text(_flow_source(flow, names, target.resolve()), encoding="utf-8")
    migration.written = [flow_py, *(p for m in migration.crews for p in m.written)]
    return migration


def _flow_source(flow: Any, crews: dict[str, str], target: Path) -> str:
    """main.py with its imports rewritten; the crews' classes defined after the imports."""
    source = flow.file.read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(flow.file))
    lines = source.splitlines()
    crew_modules = set(flow.crew_files)
    replaced: dict[int, tuple[int, list[str]]] = {}  # first line index -> (last line index, new lines)
    used: list[tuple[str, str]] = []  # (name bound in main.py, the crew class it names)
    last_import = 0
    for node in tree.body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        last_import = max(last_import, node.end_lineno or node.lineno)
        new = _rewritten(node, flow, crew_modules, used)
        if new is not None:
            replaced[node.lineno - 1] = ((node.end_lineno or node.lineno) - 1, new)
    out: list[str] = []
    skip_to = -1
    for i, line in enumerate(lines):
        if i <= skip_to:
            continue
        if i in replaced:
            skip_to, new = replaced[i]
            out += new
        else:
            out.append(line)
        if i == last_import - 1:
            out += _crew_classes([(bound, c) for bound, c in used if c in crews], crews)
    relative = os.path.relpath(flow.root.resolve(), target)
    header = [
        f'"""The flow of the CrewAI project {flow.folder.name}, written by `crew migrate` from {flow.file.name}.',
        "",
        "Its crews are the folders beside this file; the project's other modules are imported from its",
        "source folder, where they stay.",
        '"""',
        "",
        "import sys as _sys",
        "from pathlib import Path as _Path",
        "",
        "from crew.config import load_crew as _load_crew",
        "",
        "_HERE = _Path(__file__).resolve().parent",
        f"_sys.path.insert(0, str((_HERE / {relative!r}).resolve()))",
        "",
    ]
    body = [line for line in out if not line.startswith("#!")]
    text = "\n".join(header + body)
    while "\n\n\n\n" in text:  # the lines of removed imports
        text = text.replace("\n\n\n\n", "\n\n\n")
    return text.rstrip() + "\n"


def _rewritten(
    node: ast.Import | ast.ImportFrom, flow: Any, crew_modules: set[str], used: list[tuple[str, str]]
) -> list[str] | None:
    """The lines replacing one import of main.py; None to keep it as written."""
    if isinstance(node, ast.Import):
        return None
    module = _absolute(node, flow)
    names = ", ".join(a.name if a.asname is None else f"{a.name} as {a.asname}" for a in node.names)
    if module in _TO_CREW_FLOW:
        return [f"from crew.flow import {names}"]
    if module in crew_modules:
        used += [(a.asname or a.name, a.name) for a in node.names]
        return []
    if node.level:
        return [f"from {module} import {names}"]
    return None


def _absolute(node: ast.ImportFrom, flow: Any) -> str:
    if not node.level:
        return node.module or ""
    package = flow.file.resolve().parent.relative_to(flow.root.resolve()).parts
    base = list(package[: len(package) - node.level + 1])
    return ".".join([*base, node.module] if node.module else base)


def _crew_classes(names: list[tuple[str, str]], crews: dict[str, str]) -> list[str]:
    out: list[str] = []
    for bound, name in names:
        out += [
            "",
            "",
            f"class {bound}:",
            f'    """The crew folder {crews[name]}/ (the @CrewBase class {name}, migrated)."""',
            "",
            "    def crew(self):",
            f'        return _load_crew(_HERE / "{crews[name]}")',
        ]
    return [*out, ""] if out else out


__all__ = ["FlowMigration", "migrate_flow"]
