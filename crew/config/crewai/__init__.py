"""CrewAI projects as they are: ``crew.py`` read statically, beside ``agents.yaml`` and ``tasks.yaml``.

``locate(folder)`` finds the crew file of a crew folder (``crew.py``, or the ``.py``
file beside ``config/`` that defines the ``@CrewBase`` class) and the scripts beside it;
``CrewAIProject.compose(builder, ...)`` turns what they say into the builder's entries.
Nothing here runs ``crew.py``: see ``reader.py`` for what is read and what is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crew.config.crewai.compat import crewai_alias
from crew.config.crewai.plan import CrewPlan, Issue

__all__ = ["CrewAIProject", "crewai_alias", "flow_crews", "locate", "script_refusals"]


@dataclass
class CrewAIProject:
    """A crew folder's ``crew.py`` (read), its scripts' default inputs and issues, and where its modules live."""

    folder: Path
    crew_file: Path | None
    plan: CrewPlan | None
    source_root: Path
    package: str | None
    inputs: dict[str, Any] = field(default_factory=dict)
    script_issues: list[tuple[str, Issue]] = field(default_factory=list)  # (file as displayed, issue)
    composer: Any = None  # after compose(): what was read and resolved (``crew migrate`` writes it out)
    composed: Any = None

    @property
    def refused(self) -> bool:
        """A script composes the crew (and no crew.py declares one): nothing of the YAML is checked further."""
        return self.crew_file is None and any(issue.level == "error" for _, issue in self.script_issues)

    def config_files(self) -> dict[str, Path]:
        """agents.yaml and tasks.yaml as the class names them (``agents_config = 'config/agents.yaml'``)."""
        if self.plan is None or self.crew_file is None:
            return {}
        base = self.crew_file.parent
        out = {}
        for role, relative in (("agents", self.plan.agents_config), ("tasks", self.plan.tasks_config)):
            path = (base / relative).resolve()
            if path.is_file() and path.is_relative_to(self.folder.resolve()):
                out[role] = path
        return out

    def compose(self, builder: Any, agents: tuple[Any, str], tasks: tuple[Any, str]) -> Any:
        from crew.config.crewai.compose import Composer
        from crew.config.crewai.objects import Project, Resolver

        for file, issue in self.script_issues:
            builder.problems.add(file, issue.line, issue.path, issue.message, issue.level)
        if self.plan is None or self.crew_file is None:
            return None
        resolver = Resolver(self.plan, Project(self.source_root, self.package), self.crew_file)
        self.composer = Composer(builder, self.plan, resolver)
        with resolver.session():  # the project's modules import once, with sys.path set up once
            self.composed = self.composer.compose(agents, tasks)
        return self.composed


def locate(folder: Path) -> CrewAIProject | None:
    """The CrewAI side of a crew folder (the one holding ``config/``); None when it has neither crew file nor script."""
    from crew.config.crewai.reader import read_crew_file
    from crew.config.crewai.scripts import crew_import
    from crew.config.problems import display_path

    folder = folder.resolve()
    candidates = sorted(p for p in folder.glob("*.py") if p.is_file())
    crew_file = _crew_file(candidates)
    scripts = [p for p in candidates if p != crew_file and _builds_or_runs(p) and crew_import(p) is None]
    if crew_file is None and not scripts:
        return None
    root, package = _source_root(folder)
    plan = read_crew_file(crew_file, display_path(crew_file)) if crew_file is not None else None
    project = CrewAIProject(folder, crew_file, plan, root, package)
    _read_scripts(project, scripts)
    return project


def _crew_file(candidates: list[Path]) -> Path | None:
    """``crew.py`` when it defines the ``@CrewBase`` class, else the first file that does."""
    from crew.config.crewai.reader import defines_crewbase

    named = next((p for p in candidates if p.name == "crew.py" and defines_crewbase(p)), None)
    return named or next((p for p in candidates if defines_crewbase(p)), None)


def _read_scripts(project: CrewAIProject, scripts: list[Path]) -> None:
    """The scripts' issues, and the crew's default inputs: main.py's ``run()`` (the project's own entry
    point) first, else another script's, else a ``kickoff(inputs=...)`` in the crew file itself."""
    from crew.config.crewai.scripts import read_inputs, read_script
    from crew.config.problems import display_path

    crew_file = project.crew_file
    found: dict[str, dict[str, Any]] = {}
    for script in scripts:
        found[script.name], issues = read_script(script, has_crew_file=crew_file is not None)
        project.script_issues += [(display_path(script), issue) for issue in issues]
    project.inputs = found.pop("main.py", None) or next((i for i in found.values() if i), {})
    if crew_file is not None and not project.inputs:
        project.inputs, notes = read_inputs(crew_file)
        project.script_issues += [(display_path(crew_file), note) for note in notes]


def script_refusals(folder: Path) -> list[str]:
    """Why a folder without YAML cannot run: its scripts compose their crew in Python (one line each)."""
    from crew.config.crewai.scripts import crew_import, read_script
    from crew.config.problems import display_path

    out = []
    for script in sorted(p for p in folder.glob("*.py") if p.is_file() and _builds_or_runs(p)):
        line = crew_import(script)
        if line is not None:
            out.append(f"{display_path(script)}:{line}: {_OWN_SCRIPT}")
            continue
        _, issues = read_script(script, has_crew_file=False)
        out += [f"{display_path(script)}:{i.line}: {i.message}" for i in issues if i.level == "error"]
    return out


_OWN_SCRIPT = (
    "this script builds its crew in Python with crew itself: it is a program, run it as one (its folder's "
    "README says how); crew kickoff reads a crew folder's crew.yaml"
)


def flow_crews(folder: Path) -> list[Path]:
    """The crew folders of a CrewAI flow project (``src/<pkg>/crews/<name>/config``)."""
    return sorted(p.parent for p in folder.glob("src/*/crews/*/config") if p.is_dir())


def _builds_or_runs(path: Path) -> bool:
    """A script that kicks a crew off, builds one, or runs tasks (cheap text test before parsing)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return any(word in text for word in ("kickoff", "Crew(", ".execute"))


def _source_root(folder: Path) -> tuple[Path, str | None]:
    """The folder to put on sys.path for the project's imports, and the crew folder's dotted package.

    ``src/<pkg>/...`` makes ``src`` the root (CrewAI's layout, packages with or without
    ``__init__.py``); otherwise the root is the first folder up without an ``__init__.py``.
    """
    for parent in folder.parents:
        if parent.name == "src" and (parent.parent / "pyproject.toml").is_file():
            return parent, ".".join(folder.relative_to(parent).parts)
    root = folder
    while (root / "__init__.py").is_file() and root.parent != root:
        root = root.parent
    if root == folder:
        return folder, None
    return root, ".".join(folder.relative_to(root).parts)
