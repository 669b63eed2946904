"""The config layer's modules import each other in one direction: no circle, lazy or type-only.

A circle is two modules that can only be understood together; the layering test checks
imports between layers, this one the imports inside ``crew.config``. (It sits in a folder of
its own: a test file directly in tests/config would put that folder on ``sys.path``, where
its ``crewai/`` test folder would pass for the ``crewai`` package.)
"""

from __future__ import annotations

import ast
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[3] / "crew" / "config"


def _module(path: Path) -> str:
    parts = ["crew", *path.relative_to(CONFIG.parent).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    """Every ``crew.config`` module -> the ``crew.config`` modules it imports, wherever the statement is."""
    modules = {_module(p): p for p in CONFIG.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("crew.config"):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    graph[name].add(full if full in modules else node.module)
            elif isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in modules}
        graph[name].discard(name)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One path per circle found by a depth-first walk (enough to name what is wrong)."""
    found: list[list[str]] = []
    done: set[str] = set()

    def walk(node: str, path: list[str]) -> None:
        if node in path:
            found.append([*path[path.index(node) :], node])
            return
        if node in done:
            return
        for nxt in sorted(graph.get(node, ())):
            walk(nxt, [*path, node])
        done.add(node)

    for start in sorted(graph):
        walk(start, [])
    return found


def test_no_module_of_the_config_layer_imports_one_that_imports_it_back() -> None:
    assert _circles(_graph()) == []


def test_the_check_sees_a_type_only_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]
