"""Turning ``"module:attr"`` strings into Python objects, and objects into tools.

Modules are looked up the way Python looks up a script's neighbours: the crew folder
comes first on ``sys.path``, so a ``tools.py`` beside ``crew.yaml`` just works and may
import its own siblings. When another crew folder already loaded a module of the same
name (every example has a ``tools.py``), the stale one is evicted first, and the folder
being loaded moves to the front of the path again.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any

from crew.common.keywords import did_you_mean


class ImportProblem(Exception):
    """The import path is wrong; the message says how (already in user terms)."""


_RISKY_MODULES = frozenset(
    {
        "os", "posix", "nt", "subprocess", "shutil", "pty", "signal", "multiprocessing", "ctypes", "sys",
        "builtins", "importlib", "runpy", "code", "pathlib", "tempfile", "glob", "io", "socket", "ssl",
        "http", "urllib", "ftplib", "smtplib", "poplib", "imaplib", "telnetlib", "xmlrpc", "socketserver",
        "webbrowser", "asyncio",
    }
)  # fmt: skip
"""Standard-library modules that start processes, touch files or reach the network."""


def split_spec(spec: Any) -> tuple[str, str]:
    """``"module:attr"`` as (module, attr); ``ImportProblem`` when it is not one."""
    if not isinstance(spec, str) or spec.count(":") != 1:
        raise ImportProblem(f"expected an import path 'module:attr' (e.g. 'tools:search'), got {spec!r}")
    module_name, attr_path = (part.strip() for part in spec.split(":"))
    if not module_name or not attr_path:
        raise ImportProblem(f"expected an import path 'module:attr' (e.g. 'tools:search'), got {spec!r}")
    if "/" in module_name or "\\" in module_name or "" in module_name.split("."):
        # A file path or a relative import ('../secret', '.tools'): importlib would raise a bare TypeError.
        raise ImportProblem(
            f"'{module_name}' in {spec!r} is not a module path: write dotted module names found from the "
            "crew folder or the Python path (e.g. 'tools:search', 'pkg.tools:search'), not a file path"
        )
    return module_name, attr_path


def risky(spec: Any) -> bool:
    """Whether an import path points into the standard library's process, file-system or network modules."""
    try:
        module_name, _ = split_spec(spec)
    except ImportProblem:
        return False
    return module_name.split(".")[0] in _RISKY_MODULES


def check_import_path(spec: Any, folder: Path) -> None:
    """Check ``"module:attr"`` as far as possible without running any code (``validate --no-import``).

    The syntax, and that the top-level module exists: in ``folder`` or findable on the path
    (``find_spec`` of a top-level name runs nothing). Whether ``attr`` exists needs the import.
    """
    import importlib.util

    module_name, _ = split_spec(spec)
    top = module_name.split(".")[0]
    folder = folder.resolve()
    if (folder / f"{top}.py").is_file() or (folder / top / "__init__.py").is_file():
        return
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise ImportProblem(f"no module '{top}' (looked in {folder} and on the Python path)")


def import_object(spec: Any, folder: Path) -> Any:
    """Resolve ``"module:attr"`` (``attr`` may be dotted) relative to ``folder``."""
    module_name, attr_path = split_spec(spec)
    module = _import_module(module_name, folder)
    obj: Any = module
    for attr in attr_path.split("."):
        try:
            obj = getattr(obj, attr)
        except AttributeError:
            public = [n for n in dir(obj) if not n.startswith("_")]
            owner = f"module '{module_name}'" if obj is module else f"'{type(obj).__name__}'"
            raise ImportProblem(f"{owner} has no attribute '{attr}'{did_you_mean(attr, public)}") from None
    return obj


def _import_module(name: str, folder: Path) -> Any:
    folder = folder.resolve()
    top = name.split(".")[0]
    # A CrewAI project's own crew.py must never shadow this package.
    if top != "crew" and ((folder / f"{top}.py").is_file() or (folder / top / "__init__.py").is_file()):
        _make_current(folder)
        _forget_other(top, folder)
    try:
        return importlib.import_module(name)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any error inside user code is reported, not raised
        raise _import_problem(exc, name, folder) from None


def _forget_other(top: str, folder: Path) -> None:
    """Drop a module named like the crew folder's ``top`` but loaded from elsewhere, with its submodules."""
    loaded = getattr(sys.modules.get(top), "__file__", None)
    if loaded is not None and not loaded.startswith(str(folder) + os.sep):
        for key in [k for k in sys.modules if k == top or k.startswith(top + ".")]:
            del sys.modules[key]


def _import_problem(exc: BaseException, name: str, folder: Path) -> ImportProblem:
    """What went wrong importing ``name``, in the user's terms (a missing module, a syntax error, its own error)."""
    if isinstance(exc, ModuleNotFoundError):
        if exc.name == name or (exc.name and name.startswith(exc.name + ".")):
            return ImportProblem(f"no module '{name}' (looked in {folder} and on the Python path)")
        return ImportProblem(f"importing '{name}' failed: {type(exc).__name__}: {exc}")
    if isinstance(exc, SyntaxError):
        where = f"{Path(exc.filename or name).name}:{exc.lineno}" if exc.lineno else name
        return ImportProblem(f"importing '{name}' failed: {where}: {exc.msg}")
    if isinstance(exc, SystemExit):  # sys.exit() at import time: the module's error, not the command's exit
        return ImportProblem(f"importing '{name}' failed{_where(name, folder)}: it called sys.exit({exc.code!r})")
    return ImportProblem(f"importing '{name}' failed{_where(name, folder)}: {type(exc).__name__}: {exc}")


def _where(name: str, folder: Path) -> str:
    """`` (tools.py)``: the file behind a module of the crew folder, for the message."""
    parts = name.split(".")
    for candidate in (folder.joinpath(*parts).with_suffix(".py"), folder.joinpath(*parts, "__init__.py")):
        if candidate.is_file():
            return f" ({candidate})"
    return ""


# Crew folders whose modules were imported, so their modules can be told apart later.
_crew_folders: list[str] = []


def _make_current(folder: Path) -> None:
    """Put ``folder`` first on ``sys.path`` and forget modules loaded from other crew folders.

    Without this, loading crew A, then B, then A again would find B's ``tools`` (cached in
    ``sys.modules``, or first on the path). Objects already built from A's or B's modules
    keep working: only the name lookup is reset.
    """
    here = str(folder)
    others = tuple(f + os.sep for f in _crew_folders if f != here)
    if here not in _crew_folders:
        _crew_folders.append(here)
    if sys.path[:1] == [here]:
        return  # already the current crew folder
    if here in sys.path:
        sys.path.remove(here)
    sys.path.insert(0, here)
    mine = here + os.sep
    for key, module in list(sys.modules.items()):
        location = getattr(module, "__file__", None) or ""
        if location.startswith(others) and not location.startswith(mine):
            del sys.modules[key]
    importlib.invalidate_caches()


def as_tool(obj: Any, name: str, settings: dict[str, Any]) -> Any:
    """The object an import path points to, as a tool named ``name`` with ``settings`` applied.

    Accepts a ``BaseTool`` instance (``@tool`` objects included; copied, never changed
    in place), a ``BaseTool`` subclass (instantiated), a LangChain or CrewAI tool object
    or class (adapted), or a plain documented function (wrapped like ``tool(name, func)``).
    The YAML key is the tool's name everywhere.
    """
    from crew.errors import ToolDefinitionError
    from crew.tools.adapters import adapt_tool, foreign_class
    from crew.tools.base import BaseTool
    from crew.tools.decorator import tool

    values = {"name": name, **settings}
    if foreign_class(obj):
        try:
            obj = obj()
        except Exception as exc:  # noqa: BLE001 - the user's class failed to build: say so, in user terms
            raise ImportProblem(f"'{obj.__name__}()' failed: {type(exc).__name__}: {exc}") from None
    try:
        adapted = adapt_tool(obj)
    except ToolDefinitionError as exc:
        raise ImportProblem(str(exc)) from None
    if adapted is not None:
        obj = adapted
    if isinstance(obj, BaseTool):
        current = {key: getattr(obj, key) for key in type(obj).model_fields}
        return type(obj)(**{**current, **values})
    if isinstance(obj, type):
        if issubclass(obj, BaseTool):
            return obj(**values)
        raise ImportProblem(f"'{obj.__name__}' is a class but not a BaseTool subclass")
    if callable(obj):
        return tool(name, obj, **settings) if settings else tool(name, obj)
    raise ImportProblem(f"expected a tool, a BaseTool subclass or a function, got {type(obj).__name__}")
