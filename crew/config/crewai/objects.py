"""The Python objects a ``crew.py`` names: output models, tools, callbacks.

Names imported from the project's own modules (``from latest_ai.types import Report``,
``from .tools.custom_tool import MyTool``) are imported for real, with the project's
source folder on ``sys.path`` and CrewAI's stand-in aliased only for the duration;
``sys.path`` and the project's entries in ``sys.modules`` are put back afterwards. Classes
defined in ``crew.py`` itself are built from their own statements (plus the imports and
sibling classes they use) in a fresh namespace: ``crew.py`` as a whole imports CrewAI
and is never run.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import sys
import traceback
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crew.config.crewai.compat import STAND_IN, STAND_INS, crewai_alias
from crew.config.crewai.plan import CrewPlan, Import

# Where a missing top-level module comes from, when its distribution is named otherwise.
DISTRIBUTIONS = {
    "crewai_tools": "crewai-tools",
    "crewai": "crewai",
    "langchain_community": "langchain-community",
    "langchain_core": "langchain-core",
    "langchain_openai": "langchain-openai",
    "langchain": "langchain",
    # modules whose distribution is named otherwise, as tool modules of crewAI-examples import them
    "dotenv": "python-dotenv",
    "yaml": "PyYAML",
    "bs4": "beautifulsoup4",
    "pymarkdown": "pymarkdownlnt",
    "googleapiclient": "google-api-python-client",
    "PIL": "Pillow",
    "docx": "python-docx",
}


class Unresolved(Exception):
    """A name in crew.py that cannot be turned into an object; the message says why."""


class MissingPackage(Unresolved):
    """The object lives in a package that is not installed."""

    def __init__(self, module: str, attr: str | None, via: str = ""):
        self.module, self.attr = module, attr
        self.via = via  # "tools/sec_tools.py:4" when one of the project's modules is the importer
        self.distribution = DISTRIBUTIONS.get(module, module.replace("_", "-"))
        super().__init__(f"{attr or module} comes from {module}, which is not installed")


@dataclass
class Project:
    """Where the project's modules are imported from: ``root`` on sys.path, the crew file's package."""

    root: Path
    package: str | None

    def absolute(self, imp: Import) -> str:
        if imp.level == 0:
            return self._sibling(imp.module) or imp.module
        if not self.package:
            raise Unresolved(f"relative import from '{'.' * imp.level}{imp.module}' outside a package")
        parts = self.package.split(".")
        if imp.level > len(parts):
            raise Unresolved(f"relative import '{'.' * imp.level}{imp.module}' goes above the project's package")
        base = ".".join(parts[: len(parts) - imp.level + 1])
        return f"{base}.{imp.module}" if imp.module else base

    def _sibling(self, module: str) -> str | None:
        """``tools.x`` as ``<package>.tools.x`` when ``tools`` sits beside crew.py and not in the source root.

        crewAI-examples' src-layout crews write ``from tools.calculator_tool import
        CalculatorTool`` and run with the crew's own folder first on the path. Importing it
        as the package's submodule honours that without putting that folder (which holds
        ``crew.py``, maybe a ``types.py``) on ``sys.path``, where it would hide real modules.
        """
        if not self.package or not module:
            return None
        top = module.split(".")[0]
        folder = self.root.joinpath(*self.package.split("."))
        if top in sys.stdlib_module_names or _module_in(self.root, top) or not _module_in(folder, top):
            return None
        return f"{self.package}.{module}"

    def owns(self, module: Any) -> bool:
        location = getattr(module, "__file__", None) or ""
        return location.startswith(self._prefix)

    @property
    def _prefix(self) -> str:
        return str(self.root) + os.sep

    def top_names(self) -> set[str]:
        """The project's top-level module names; never ``crew`` (a flat project's crew.py must not hide us)."""
        names = {p.stem if p.suffix == ".py" else p.name for p in self.root.iterdir() if _importable(p)}
        return names - {"crew"}


def _stood_in(name: str) -> bool:
    """Whether ``name`` is (or, once the alias is gone, would be) crew's stand-in rather than the real package."""
    if name in sys.modules:
        return getattr(sys.modules[name], STAND_IN, False)
    return importlib.util.find_spec(name) is None


def _module_in(folder: Path, name: str) -> bool:
    return (folder / f"{name}.py").is_file() or (folder / name).is_dir()


def _importable(path: Path) -> bool:
    return (path.suffix == ".py" and path.stem.isidentifier()) or (path.is_dir() and (path / "__init__.py").is_file())


@contextmanager
def project_imports(project: Project) -> Iterator[None]:
    """The project's source folder first on sys.path, CrewAI aliased if missing; all put back afterwards.

    Modules of the same top-level names loaded from elsewhere (another project's ``tools``)
    step aside meanwhile; the project's own modules leave ``sys.modules`` at the end, so a
    later load of another project finds its own.
    """
    saved_path = list(sys.path)
    tops = project.top_names()
    aside = {
        name: module
        for name, module in list(sys.modules.items())
        if name.split(".")[0] in tops and not project.owns(module)
    }
    for name in aside:
        del sys.modules[name]
    sys.path.insert(0, str(project.root))
    importlib.invalidate_caches()
    try:
        with crewai_alias():
            yield
    finally:
        sys.path[:] = saved_path
        for name, module in list(sys.modules.items()):
            if project.owns(module):
                del sys.modules[name]
        sys.modules.update(aside)
        importlib.invalidate_caches()


@dataclass
class Resolver:
    """Resolves the names of one plan, each at most once."""

    plan: CrewPlan
    project: Project
    crew_file: Path
    _cache: dict[str, Any] = field(default_factory=dict)
    _depth: int = 0
    _holder: types.ModuleType | None = None

    @contextmanager
    def session(self) -> Iterator[None]:
        """One ``project_imports`` scope around many imports (nested calls join the open one)."""
        if self._depth:
            yield
            return
        with project_imports(self.project):
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1

    def obj(self, name: str) -> Any:
        """The object ``name`` (maybe dotted) refers to in crew.py."""
        if name not in self._cache:
            self._cache[name] = self._resolve(name)
        return self._cache[name]

    def check(self, name: str) -> None:
        """What ``obj(name)`` would find, checked without importing or running anything (``--no-import``):
        the name is imported or defined in crew.py, and the module it is imported from exists."""
        head = name.partition(".")[0]
        if head in self.plan.imports:
            self._findable(self.plan.imports[head])
        elif head in self.plan.assigns and head not in self.plan.definitions:
            line = self.plan.assigns[head].lineno
            raise Unresolved(f"'{head}' is computed by code (line {line}); crew reads no module-level code")
        elif head not in self.plan.definitions:
            raise Unresolved(f"'{head}' is neither imported nor defined in {self.plan.file}")

    def _findable(self, imp: Import) -> None:
        """The module of an import exists: the project's own as a file, any other as an installed package
        (found by the import system's finders, which read folders and run nothing)."""
        module_name = self.project.absolute(imp)
        top = module_name.split(".")[0]
        if top in self.project.top_names():
            if not _module_in(self.project.root.joinpath(*module_name.split(".")[:-1]), module_name.split(".")[-1]):
                raise Unresolved(f"no module '{module_name}' in {self.project.root}")
        elif top in STAND_INS:  # crewai stands in when missing; of crewai-tools, only its BaseTool does
            if top == "crewai_tools" and imp.attr not in (None, "BaseTool") and _stood_in(top):
                raise MissingPackage(top, imp.attr)
        elif top not in sys.modules and importlib.util.find_spec(top) is None:
            raise MissingPackage(top, imp.attr)

    def _resolve(self, name: str) -> Any:
        head, _, rest = name.partition(".")
        if head in self.plan.imports:
            obj = self._imported(self.plan.imports[head])
        elif head in self.plan.definitions:
            obj = self.local_definitions({head})[head]
        elif head in self.plan.assigns:
            line = self.plan.assigns[head].lineno
            raise Unresolved(f"'{head}' is computed by code (line {line}); crew reads no module-level code")
        else:
            raise Unresolved(f"'{head}' is neither imported nor defined in {self.plan.file}")
        for attr in rest.split(".") if rest else ():
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                raise Unresolved(f"'{name}': no attribute '{attr}'") from None
        return obj

    def _imported(self, imp: Import) -> Any:
        module_name = self.project.absolute(imp)
        top = module_name.split(".")[0]
        try:
            with self.session():
                module = importlib.import_module(module_name)
                if imp.attr is None:
                    return module
                try:
                    return getattr(module, imp.attr)
                except AttributeError:
                    # `from pkg import submodule`
                    return importlib.import_module(f"{module_name}.{imp.attr}")
        except ModuleNotFoundError as exc:
            missing = (exc.name or top).split(".")[0]
            if missing not in self.project.top_names():
                raise MissingPackage(missing, imp.attr, self._importer(exc)) from None
            raise Unresolved(f"importing '{module_name}' failed: {exc}") from None
        except ImportError as exc:
            # `from crewai_tools import RagTool` in a tool module meets the stand-in, which has only BaseTool
            missing = (exc.name or "").split(".")[0]
            if missing in STAND_INS and _stood_in(missing):
                raise MissingPackage(missing, imp.attr, self._importer(exc)) from None
            where = self._importer(exc)
            at = f" ({where})" if where else ""
            raise Unresolved(
                f"importing '{module_name}' failed{at}: ImportError: {exc}{_moved(missing, exc)}"
            ) from None
        except Unresolved:
            raise
        except SyntaxError as exc:
            where = f"{Path(exc.filename or module_name).name}:{exc.lineno}"
            raise Unresolved(f"importing '{module_name}' failed: {where}: {exc.msg}") from None
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - an error inside the user's module is reported
            raise Unresolved(f"importing '{module_name}' failed: {type(exc).__name__}: {exc}") from None

    def _importer(self, exc: BaseException) -> str:
        """``file:line`` of the project's own module whose import statement failed ("" for crew.py's own)."""
        from crew.config.problems import display_path

        where = ""
        for frame, line in traceback.walk_tb(exc.__traceback__):
            file = frame.f_code.co_filename
            if file.startswith(str(self.project.root) + os.sep) and Path(file) != self.crew_file:
                where = f"{display_path(Path(file))}:{line}"
        return where

    def local_definitions(self, names: set[str]) -> dict[str, Any]:
        """Classes and functions defined in crew.py, built from their own statements in a fresh namespace.

        Each comes with the definitions it names (a model's nested models), the literal
        constants it reads (``LIMIT = 100``) and the imports it uses; nothing else of crew.py
        runs. All share one namespace, so a model built on its own and as another's field
        is one class.
        """
        wanted = self._closure(names)
        holder = self._namespace()
        nodes = [n for name, n in self.plan.definitions.items() if name in wanted and name not in holder.__dict__]
        used = _names_in(nodes)
        for name in sorted(used & set(self.plan.imports)):
            if name not in holder.__dict__:
                holder.__dict__[name] = self._imported(self.plan.imports[name])
        constants = [
            _assign(name, self.plan.assigns[name]) for name in self.constants(used) if name not in holder.__dict__
        ]
        module = ast.fix_missing_locations(ast.Module(body=[*constants, *nodes], type_ignores=[]))
        # pydantic resolves annotations through sys.modules[cls.__module__]: present while the classes build
        sys.modules[holder.__name__] = holder
        try:
            exec(compile(module, str(self.crew_file), "exec"), holder.__dict__)
            for node in nodes:
                rebuild = getattr(holder.__dict__[node.name], "model_rebuild", None)
                if rebuild is not None:
                    rebuild()
        except Exception as exc:  # noqa: BLE001 - the user's class is wrong: report it with its line
            what = ", ".join(sorted(names))
            raise Unresolved(f"building {what} from its definition failed: {type(exc).__name__}: {exc}") from None
        finally:
            sys.modules.pop(holder.__name__, None)
        return {name: holder.__dict__[name] for name in wanted}

    def constants(self, used: set[str]) -> list[str]:
        """The module-level ``NAME = <literal>`` assignments among ``used``, in source order."""
        out = []
        for name, value in self.plan.assigns.items():
            if name in used and name not in self.plan.definitions:
                try:
                    ast.literal_eval(value)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    continue
                out.append(name)
        return out

    def _namespace(self) -> types.ModuleType:
        if self._holder is None:
            self._holder = types.ModuleType(f"crewai_project_{self.plan.class_name}")
            self._holder.__file__ = str(self.crew_file)
        return self._holder

    def _closure(self, names: set[str]) -> set[str]:
        out, todo = set(), list(names)
        while todo:
            name = todo.pop()
            if name in out or name not in self.plan.definitions:
                continue
            out.add(name)
            todo += [n.id for n in ast.walk(self.plan.definitions[name]) if isinstance(n, ast.Name)]
        return out


def _names_in(nodes: list[Any]) -> set[str]:
    used = {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}
    return used | {_base_name(n) for node in nodes for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def _assign(name: str, value: ast.expr) -> ast.stmt:
    return ast.copy_location(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value), value)


def _base_name(node: ast.Attribute) -> str:
    value: ast.expr = node
    while isinstance(value, ast.Attribute):
        value = value.value
    return value.id if isinstance(value, ast.Name) else ""


def _moved(package: str, exc: ImportError) -> str:
    """What to write instead, for a name a newer CrewAI moved (older projects still import it from its
    old place, and fail with the current packages under CrewAI itself too)."""
    if package == "crewai_tools" and "'BaseTool'" in str(exc):
        return "; crewai-tools 1.x has no BaseTool: write `from crewai.tools import BaseTool` there"
    return ""
