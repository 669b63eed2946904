"""A flow folder: where its flow class is, which crews sit beside it, and what it needs before it runs.

Two layouts. A CrewAI flow project: ``pyproject.toml`` + ``src/<pkg>/main.py`` with a
``Flow`` subclass, its crews in ``src/<pkg>/crews/<name>/`` (``@CrewBase`` files with
``config/``). A crew-native flow folder: ``flow.py`` (or ``module:Class`` given to ``crew
kickoff``) beside crew folders. ``find_flow`` tells them apart by reading files, running none;
``check_flow`` reads the modules the flow imports and says, each at its file and line, what
crew does not serve (``crewai`` API it lacks) and what the flow needs from outside (a
package not installed, an environment variable not set), so a flow that cannot finish is
refused before its first step.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from crew.config.problems import Problems, display_path
from crew.errors import ConfigError

_FLOW_MODULES = frozenset({"crewai", "crewai.flow", "crewai.flow.flow", "crew", "crew.flow"})


@dataclass
class FlowProject:
    """A flow folder, as read: the file and class of its flow, its crews, and how its modules import."""

    folder: Path
    kind: Literal["crewai", "native"]
    file: Path
    module: str
    root: Path
    """The folder on ``sys.path`` while the flow runs (``src`` of a CrewAI project)."""
    class_name: str
    class_line: int
    crew_files: dict[str, tuple[Path, list[str]]] = field(default_factory=dict)
    """A CrewAI project's crew modules: dotted name -> (file, its ``@CrewBase`` class names)."""
    crew_folders: list[Path] = field(default_factory=list)

    @property
    def package(self) -> str:
        return self.module.split(".")[0]


def find_flow(path: str | Path, target: str | None = None) -> FlowProject | None:
    """The flow at ``path`` (a folder, or a ``.py`` file); None when it holds none.

    ``target`` is ``module:Class`` or ``Class`` (``crew kickoff DIR --flow ...`` / ``DIR/flow.py:Class``).
    """
    given = Path(path)
    if target is None and ":" in given.name and not given.exists():
        given, target = given.with_name(given.name.split(":")[0]), given.name.split(":", 1)[1]
    given = given.absolute()  # a CrewAI flow runs from its own root: its paths must not depend on ours
    if given.is_file() and given.suffix == ".py":
        return _native(given.parent, given, target)
    if not given.is_dir():
        return None
    if target is not None and ":" in target:
        module, _, cls = target.partition(":")
        file = given.joinpath(*module.removesuffix(".py").split(".")).with_suffix(".py")
        if not file.is_file():
            raise ConfigError(f"{display_path(given)}: no module '{module}' (looked for {display_path(file)})")
        return _native(given, file, cls)
    if given.parent.name == "src" and (given.parent.parent / "pyproject.toml").is_file() and _flow_main(given):
        given = given.parent.parent  # the package folder of a CrewAI flow project: the project is its root
    crewai = _crewai(given, target)
    if crewai is not None:
        return crewai
    if (given / "flow.py").is_file():
        return _native(given, given / "flow.py", target)
    return None


def _flow_main(package: Path) -> bool:
    return (package / "main.py").is_file() and bool(_flow_classes(package / "main.py"))


def _flow_classes(file: Path) -> list[ast.ClassDef]:
    """The classes of a file that subclass ``Flow`` or ``Flow[State]`` (read, not imported)."""
    try:
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
    except (SyntaxError, OSError, UnicodeDecodeError, ValueError):
        return []
    out = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                base = base.value if isinstance(base, ast.Subscript) else base
                name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
                if name == "Flow":
                    out.append(node)
                    break
    return out


def _choose(file: Path, target: str | None) -> tuple[str, int]:
    classes = _flow_classes(file)
    where = display_path(file)
    if target is not None:
        hit = next((c for c in classes if c.name == target), None)
        if hit is None:
            found = ", ".join(c.name for c in classes) or "none"
            raise ConfigError(f"{where}: no Flow subclass '{target}' (found: {found})")
        return hit.name, hit.lineno
    if not classes:
        raise ConfigError(f"{where}: no Flow subclass (a class deriving from Flow or Flow[State])")
    if len(classes) > 1:
        names = ", ".join(c.name for c in classes)
        raise ConfigError(f"{where}: several Flow subclasses ({names}): name one, e.g. {where}:{classes[-1].name}")
    return classes[0].name, classes[0].lineno


def _native(folder: Path, file: Path, target: str | None) -> FlowProject:
    name, line = _choose(file, target)
    relative = file.resolve().relative_to(folder.resolve()).with_suffix("")
    crews = sorted(p.parent for p in folder.glob("*/crew.yaml")) + sorted(
        p.parent.parent for p in folder.glob("*/config/agents.yaml")
    )
    return FlowProject(folder, "native", file, ".".join(relative.parts), folder, name, line, crew_folders=crews)


def _crewai(folder: Path, target: str | None) -> FlowProject | None:
    """A CrewAI flow project: pyproject.toml, and one ``src/<pkg>/main.py`` defining a Flow subclass."""
    if not (folder / "pyproject.toml").is_file():
        return None
    mains = [m for m in sorted(folder.glob("src/*/main.py")) if _flow_classes(m)]
    if not mains:
        return None
    if len(mains) > 1:
        listed = ", ".join(display_path(m) for m in mains)
        raise ConfigError(f"{display_path(folder)}: several flows ({listed}); point at the one to run")
    main = mains[0]
    name, line = _choose(main, target)
    from crew.config.crewai.reader import read_crew_file

    root = main.parent.parent
    crew_files: dict[str, tuple[Path, list[str]]] = {}
    for file in sorted(main.parent.glob("crews/*/*.py")):
        plan = read_crew_file(file, display_path(file))
        if plan is not None and plan.class_name:
            module = ".".join(file.relative_to(root).with_suffix("").parts)
            crew_files[module] = (file, [plan.class_name])
    folders = sorted({f.parent for f, _ in crew_files.values()})
    return FlowProject(folder, "crewai", main, f"{main.parent.name}.main", root, name, line, crew_files, folders)


# -- what the flow's own modules need -------------------------------------------------------------------


def check_flow(project: FlowProject, problems: Problems | None = None) -> Problems:
    """What the modules the flow imports need that crew or this machine does not have, each at its line."""
    from crew.config.crewai.flow_compat import refusal

    problems = problems if problems is not None else Problems()
    for file in _reachable(project):
        tree = _parse(file)
        if tree is None:
            continue
        where, said = display_path(file), set()
        for node in ast.walk(tree):
            for module, name, line in _imports_of(node, file, project):
                reason = refusal(module, name) if project.kind == "crewai" else None
                if reason is not None:
                    problems.add(where, line, "", reason)
                elif _missing(module, project) and module.split(".")[0] not in said:
                    said.add(module.split(".")[0])
                    problems.add(where, line, "", _missing_package(module))
            variable = _env_read(node)
            if variable is not None and variable not in os.environ:
                problems.add(where, getattr(node, "lineno", 1), "", _unset(variable))
    return problems


def _parse(file: Path) -> ast.Module | None:
    try:
        return ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
    except (SyntaxError, OSError, UnicodeDecodeError, ValueError):
        return None


def _reachable(project: FlowProject) -> list[Path]:
    """The flow's file and the project modules it imports, transitively; crew files are read, not walked."""
    crew_files = {f.resolve() for f, _ in project.crew_files.values()}
    seen: list[Path] = []
    todo = [project.file.resolve()]
    while todo:
        file = todo.pop()
        if file in seen or file in crew_files:
            continue
        seen.append(file)
        tree = _parse(file)
        for node in ast.walk(tree) if tree is not None else ():
            for module, name, _ in _imports_of(node, file, project):
                todo += [f for f in _own_files(module, name, project) if f not in seen]
    return seen


def _imports_of(node: ast.AST, file: Path, project: FlowProject) -> list[tuple[str, str | None, int]]:
    """(absolute module, imported name or None, line) of an import statement; [] for any other node."""
    if isinstance(node, ast.Import):
        return [(a.name, None, node.lineno) for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    module = node.module or ""
    if node.level:
        package = file.resolve().parent.relative_to(project.root.resolve()).parts
        base = package[: len(package) - node.level + 1]
        module = ".".join([*base, module] if module else base)
    return [(module, a.name, node.lineno) for a in node.names]


def _own_files(module: str, name: str | None, project: FlowProject) -> list[Path]:
    """The project files ``from module import name`` runs: the module, and ``name`` when it is a submodule."""
    base = project.root.joinpath(*module.split("."))
    out = []
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            out.append(candidate.resolve())
    if name is not None and (base / f"{name}.py").is_file():
        out.append((base / f"{name}.py").resolve())
    return out


def _missing(module: str, project: FlowProject) -> bool:
    top = module.split(".")[0]
    if not top or top in sys.builtin_module_names or top == project.package:
        return False
    if top in ("crewai", "crewai_tools") and project.kind == "crewai":
        return False  # served (or refused by name) while the flow runs
    # the project's own source folder: the root, or (a migrated flow beside its project) an src/ above it
    places = [project.root, *(parent / "src" for parent in list(project.root.resolve().parents)[:3])]
    if any(p.joinpath(top).is_dir() or p.joinpath(f"{top}.py").is_file() for p in places):
        return False
    try:
        return importlib.util.find_spec(top) is None
    except (ImportError, ValueError):
        return True


_SERVICES = {
    "slack": "Slack",
    "trello": "Trello",
    "gmail": "Gmail",
    "google": "Google",
    "serper": "the Serper search API",
    "tavily": "the Tavily search API",
    "exa": "the Exa search API",
    "openai": "OpenAI",
}

_PACKAGES = {"slack_sdk": "slack-sdk", "dotenv": "python-dotenv", "langchain_community": "langchain-community"}


def _service(text: str) -> str:
    low = text.lower()
    return next((f" ({service})" for key, service in _SERVICES.items() if key in low), "")


def _missing_package(module: str) -> str:
    top = module.split(".")[0]
    package = _PACKAGES.get(top, top.replace("_", "-"))
    return (
        f"imports {module}{_service(module)}, which is not installed: the flow cannot run without it "
        f"(`pip install {package}`)"
    )


def _unset(variable: str) -> str:
    return (
        f"reads the environment variable {variable}{_service(variable)}, which is not set: "
        "the flow needs it (set it, or put it in the project's .env)"
    )


def _env_read(node: ast.AST) -> str | None:
    """``os.getenv("X")``, ``os.environ.get("X")`` or ``os.environ["X"]`` without a default: the name X."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        func = ast.unparse(node.func)
        if func in ("os.getenv", "getenv", "os.environ.get", "environ.get"):
            return _literal(node.args[0])
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.ctx, ast.Load)
        and ast.unparse(node.value) in ("os.environ", "environ")
    ):
        return _literal(node.slice)
    return None


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def is_flow_folder(path: str | Path) -> bool:
    """Whether ``path`` holds a flow (cheap: reads files, raises nothing)."""
    try:
        return find_flow(path) is not None
    except ConfigError:
        return True


__all__ = ["FlowProject", "check_flow", "find_flow", "is_flow_folder"]
