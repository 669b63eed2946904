"""The layering holds by a check, not by hope: a lower layer never imports a higher one.

Every module under ``crew/`` is parsed (``ast``, nothing is imported) and every import it
makes is collected: module-level ones, those inside functions (the lazy ones), those under
``if TYPE_CHECKING:`` (a type-only dependency still couples the layers) and
``import_module("...")`` / ``__import__("...")`` with a literal name. Each module belongs to
exactly one layer of ``LAYERS``; a module may import its own layer and the ones below it.

A new module must be placed in the table (the test says so): deciding where it sits is
the point.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "crew"

ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def _table(marker: str) -> list[list[str]]:
    """The rows of the table between ``<!-- marker...`` and ``<!-- /marker -->``, as cells."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    start = text.index(f"<!-- {marker}")
    body = text[text.index("\n", start) : text.index(f"<!-- /{marker} -->")]
    rows = [line.strip().strip("|").split("|") for line in body.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row] for row in rows[2:]]  # past the header and its rule


def _names(cell: str) -> tuple[str, ...]:
    return tuple(re.findall(r"`([\w.]+)`", cell))


# Low -> high, as docs/architecture.md draws them. A name covers the module and everything
# under it (``crew.tools`` is the package); the longest matching name wins.
LAYERS: list[tuple[str, tuple[str, ...]]] = [(row[0], _names(row[1])) for row in _table("layers")]

# A leaf: doubles for users' tests. It may import any layer; nothing in crew imports it.
LEAF = "crew.testing"

# Imports that break the rules on purpose, each with its reason (the page's "allowed" table).
ALLOWED: dict[tuple[str, str], str] = {(_names(r[0])[0], _names(r[1])[0]): r[2] for r in _table("allowed")}

# Import circles the page names, each with its reason.
CIRCLES: list[frozenset[str]] = [frozenset(_names(row[0])) for row in _table("circles")]


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, module: str, is_package: bool, exists=lambda name: False) -> list[Import]:
    """Every ``crew`` module ``module``'s source imports, wherever the import statement is.

    ``from crew import prompts`` imports the module ``crew.prompts`` when there is one
    (``exists``), otherwise a name of ``crew`` itself.
    """
    found: list[Import] = []
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x / from ..a import b
                anchor = package[: len(package) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{a.name}" if exists(f"{base}.{a.name}") else base for a in node.names]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                names = [node.args[0].value]
        found.extend(Import(module, name, node.lineno) for name in names if name.split(".")[0] == "crew")
    return found


def layer_of(module: str) -> int | None:
    """Index in LAYERS of the longest layer name covering ``module``; None if none does."""
    best: tuple[int, int] | None = None
    for index, (_, names) in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and (best is None or len(name) > best[0]):
                best = (len(name), index)
    return None if best is None else best[1]


def is_leaf(module: str) -> bool:
    return module == LEAF or module.startswith(LEAF + ".")


def violations(found: list[Import]) -> list[str]:
    problems = []
    for imp in found:
        if is_leaf(imp.importer) or (imp.importer, imp.imported) in ALLOWED:
            continue
        if is_leaf(imp.imported):
            problems.append(f"{imp.importer} (line {imp.line}) imports {imp.imported}: nothing in crew imports {LEAF}")
            continue
        low, high = layer_of(imp.importer), layer_of(imp.imported)
        if low is not None and high is not None and high > low:
            problems.append(
                f"{imp.importer} ({LAYERS[low][0]}, line {imp.line}) imports {imp.imported} ({LAYERS[high][0]})"
            )
    return problems


@functools.cache  # every test reads the same parse of the package (the tests only read it)
def _crew_imports() -> tuple[list[str], list[Import]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p, PACKAGE): p for p in paths}

    def exists(name: str) -> bool:
        return name in modules

    found = [
        imp
        for name, path in modules.items()
        for imp in imports_of(path.read_text(encoding="utf-8"), name, path.name == "__init__.py", exists)
    ]
    return sorted(modules), found


def test_no_lower_layer_imports_a_higher_one():
    _, found = _crew_imports()
    assert violations(found) == []


def test_every_module_has_a_layer():
    modules, _ = _crew_imports()
    unplaced = [m for m in modules if layer_of(m) is None and not is_leaf(m)]
    assert unplaced == [], f"put these modules in LAYERS in {Path(__file__).name}: {unplaced}"


def _circles(modules: list[str], found: list[Import]) -> list[frozenset[str]]:
    """Every set of two or more modules that import each other (strongly connected), by Tarjan."""
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for imp in found:
        if imp.imported in edges and imp.imported != imp.importer:
            edges[imp.importer].add(imp.imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                circles.append(frozenset(members))

    for module in modules:
        if module not in index:
            visit(module)
    return circles


def test_no_import_circles_but_the_named_ones():
    modules, found = _crew_imports()
    unnamed = [sorted(c) for c in _circles(modules, found) if c not in CIRCLES]
    assert unnamed == [], "modules that import each other (break the circle, or name it in docs/architecture.md)"


def test_the_circle_finder_finds_loops():
    found = [Import("a", "b", 1), Import("b", "c", 1), Import("c", "a", 1), Import("c", "d", 1)]
    assert _circles(["a", "b", "c", "d"], found) == [frozenset({"a", "b", "c"})]


def test_every_named_circle_and_allowed_import_is_still_there():
    """A named circle or allowed import that is gone must leave the page, or it would hide a new one."""
    modules, found = _crew_imports()
    assert [sorted(c) for c in CIRCLES if c not in _circles(modules, found)] == []


def test_every_allowed_exception_is_still_needed():
    """An entry whose import is gone must go too, or it would silently allow a new one."""
    _, found = _crew_imports()
    made = {(imp.importer, imp.imported) for imp in found}
    assert [pair for pair in ALLOWED if pair not in made] == []


def test_the_checker_sees_lazy_type_only_and_dynamic_imports():
    source = """
import crew.errors
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from crew.crew import Crew
def later():
    from crew.cli import main
    from crew.agent import prompts
    from crew import __version__
    from . import sibling
    return importlib.import_module("crew.run"), __import__("crew.store")
"""
    found = imports_of(source, "crew.tools.example", False, exists={"crew.agent.prompts"}.__contains__)
    assert [(i.imported, i.line) for i in found] == [
        ("crew.errors", 2),
        ("crew.crew", 5),
        ("crew.cli", 7),
        ("crew.agent.prompts", 8),
        ("crew", 9),
        ("crew.tools", 10),
        ("crew.run", 11),
        ("crew.store", 11),
    ]
    assert violations(found) == [
        "crew.tools.example (tools, line 5) imports crew.crew (run)",
        "crew.tools.example (tools, line 7) imports crew.cli (config/cli)",
        "crew.tools.example (tools, line 8) imports crew.agent.prompts (models/agent)",
        "crew.tools.example (tools, line 9) imports crew (config/cli)",
        "crew.tools.example (tools, line 11) imports crew.run (run)",
        "crew.tools.example (tools, line 11) imports crew.store (run)",
    ]
    assert violations([Import("crew.agent", "crew.testing.models", 3)]) == [
        "crew.agent (line 3) imports crew.testing.models: nothing in crew imports crew.testing"
    ]
    assert violations([Import("crew.testing.models", "crew.crew", 1), Import("crew.crew", "crew.tools.base", 1)]) == []
