"""``crew.serve``'s public face: what serving crews from one's own app needs, each name loaded on first use."""

from __future__ import annotations

import ast
import subprocess
import sys
from importlib import import_module
from pathlib import Path

from serve_kit import env

import crew.serve


def test_every_public_name_resolves_and_type_checkers_see_the_same_list() -> None:
    assert sorted(crew.serve.__all__) == sorted(crew.serve._LAZY)
    for name in crew.serve.__all__:
        assert getattr(crew.serve, name) is getattr(import_module(crew.serve._LAZY[name]), name), name
    tree = ast.parse(Path(str(crew.serve.__file__)).read_text(encoding="utf-8"))
    seen = {
        alias.name: node.module
        for block in tree.body
        if isinstance(block, ast.If) and getattr(block.test, "id", None) == "TYPE_CHECKING"
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert seen == crew.serve._LAZY


def test_importing_crew_and_crew_serve_loads_no_sdk() -> None:
    code = (
        "import sys, crew, crew.serve\n"
        "from crew.serve import serve_crew, load_served, Kickoffs, ServedCrew, guarded\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'starlette', 'uvicorn', 'a2a', 'litellm'}))"
    )
    run = [sys.executable, "-c", code]
    out = subprocess.run(run, capture_output=True, text=True, check=True, timeout=60, env=env())
    assert out.stdout.strip() == "[]"
