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
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "crew"

# Low -> high. A name covers the module and everything under it (``crew.tools`` is the
# package); the longest matching name wins. ``crew.mcp`` sits with the tools: an MCP
# server is a source of BaseTools and knows nothing of agents, runs or config (it reads an
# agent's ``mcp`` list by duck typing), so an Agent can get its servers' tools, and open them
# for a task run outside a crew, without reaching up into the run layer.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("common", ("crew.errors", "crew.common")),
    ("tools", ("crew.tools", "crew.mcp")),
    ("tasks", ("crew.tasks",)),
    ("models/agent", ("crew.models", "crew.agent", "crew.stream")),
    ("run", ("crew.run", "crew.crew", "crew.store", "crew.backends")),
    # the root package (``crew/__init__.py``: the public face, every name lazily) sits at the
    # top with the CLI (whose live view is ``crew.cli.progress``)
    ("config/cli", ("crew", "crew.config", "crew.cli", "crew.__main__")),
]

# A leaf: doubles for users' tests. It may import any layer; nothing in crew imports it.
LEAF = "crew.testing"

# Imports that break the rules on purpose, each with its reason. Keep it short.
ALLOWED: dict[tuple[str, str], str] = {
    # The model string "test" means TestModel anywhere a model is accepted (YAML, --llm,
    # Agent(llm="test")), so resolving a model string must know it. The import is lazy:
    # crew.testing loads only when "test" is asked for.
    ("crew.models.resolve", "crew.testing"): 'the "test" model string resolves to TestModel',
    # `crew kickoff` on the test model: its tool calls get stand-ins unless --live-tools (from the top layer).
    ("crew.cli.kickoff", "crew.testing.dry_run"): "the test model's tool calls are dry on the command line",
}


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
