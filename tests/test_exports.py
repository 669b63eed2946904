"""crew's public names: one list for type checkers, one for run time, and they agree.

``crew/__init__.py`` says its exports three times (see its docstring); a name added to one
place and forgotten in another would be invisible to users' type checkers, or fail only
when first touched. These tests read the file as source (``ast``), so they check what a type
checker sees, not what happens to work at run time.
"""

import ast
import json
import re
import shutil
import subprocess
import sys
import tomllib
from importlib import import_module
from pathlib import Path

import pytest

import crew

INIT = Path(crew.__file__)
ROOT = INIT.parent.parent


def _module() -> ast.Module:
    return ast.parse(INIT.read_text(encoding="utf-8"))


def _literal_all() -> list[str]:
    for node in _module().body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]:
            assert isinstance(node.value, ast.List), "__all__ must be a literal list (type checkers read it)"
            names = [elt.value for elt in node.value.elts if isinstance(elt, ast.Constant)]
            assert len(names) == len(node.value.elts), "__all__ must hold only string literals"
            return names
    raise AssertionError("crew/__init__.py has no `__all__ = [...]`")


def _type_checking_imports() -> dict[str, str]:
    """name -> module, from the ``if TYPE_CHECKING:`` block."""
    imports: dict[str, str] = {}
    for node in _module().body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module, ast.unparse(stmt)
                for alias in stmt.names:
                    assert alias.asname in (None, alias.name), f"{alias.name} is re-exported under another name"
                    assert alias.name not in imports, f"{alias.name} imported twice"
                    imports[alias.name] = stmt.module
    return imports


def test_all_is_a_literal_equal_to_the_lazy_map_and_the_runtime_list():
    names = _literal_all()
    assert len(names) == len(set(names)), "a name listed twice in __all__"
    assert names == crew.__all__
    assert set(names) - {"__version__"} == set(crew._EXPORTS)


def test_type_checking_imports_name_every_export_from_the_module_the_lazy_map_loads():
    assert _type_checking_imports() == crew._EXPORTS


def test_every_exported_name_resolves_to_the_object_its_module_defines():
    for name in crew.__all__:
        value = getattr(crew, name)
        if name != "__version__":
            assert value is getattr(import_module(crew._EXPORTS[name]), name), name
    assert crew.__version__ == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert sorted(dir(crew)) == sorted(crew.__all__)


def test_an_unknown_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchThing'"):
        _ = crew.NoSuchThing


def test_import_crew_loads_no_submodule_and_nothing_heavy():
    code = (
        "import sys, crew\n"
        "print(sorted(m for m in sys.modules if m.startswith('crew.')"
        " or m.split('.')[0] in ('pydantic', 'litellm', 'networkx', 'structlog', 'yaml',"
        " 'numpy', 'wordllama', 'pypdf')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_py_typed_ships_as_package_data():
    assert (INIT.parent / "py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["crew"]


@pytest.mark.skipif(shutil.which("pyright") is None, reason="pyright comes with the dev extra")
def test_a_users_type_checker_sees_every_export_with_its_real_type(tmp_path: Path):
    """What users get: pyright on their code resolves each public name to a real type.

    A name missing from the ``TYPE_CHECKING`` imports would still resolve, through the
    module's ``__getattr__``, to ``Any``: no error anywhere, and no checking either.
    """
    names = [n for n in crew.__all__ if n != "__version__"]
    (tmp_path / "user.py").write_text("import crew\n" + "".join(f"reveal_type(crew.{n})\n" for n in names))
    config = {"extraPaths": [str(ROOT)], "typeCheckingMode": "standard", "pythonVersion": "3.11"}
    (tmp_path / "pyrightconfig.json").write_text(json.dumps(config))
    run = subprocess.run(
        ["pyright", "--outputjson", "user.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    report = json.loads(run.stdout)
    revealed = {}
    for diagnostic in report["generalDiagnostics"]:
        assert diagnostic["severity"] == "information", diagnostic["message"]
        match = re.match(r'Type of "crew\.(\w+)" is "(.*)"', diagnostic["message"], re.S)
        assert match, diagnostic["message"]
        revealed[match[1]] = match[2]
    assert sorted(revealed) == sorted(names)
    untyped = {name: shown for name, shown in revealed.items() if shown == "Any" or "Unknown" in shown}
    assert untyped == {}


# Every line that tells a user what to `pip install`, in the docs, the examples and crew's own
# error hints. `crew` on PyPI is an unrelated 2016 project: `pip install "crew[mcp]"` installs it.
_INSTALL = re.compile(r"""pip install (?:-U |--upgrade )?["']?(crew(?:-[\w-]+)?)(?=[\[\s"'`]|$)""", re.M)


def test_every_install_line_names_the_distribution_on_pypi():
    name = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
    assert name == "crew-agents"
    places = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "examples").rglob("*.*")]
    places += [p for p in (ROOT / "crew").rglob("*.py")]
    wrong = [
        f"{path.relative_to(ROOT)}: {match.group(0).strip()}"
        for path in places
        if path.is_file() and path.suffix in (".md", ".py", ".yaml", ".txt")
        for match in _INSTALL.finditer(path.read_text(encoding="utf-8"))
        if match.group(1) != name
    ]
    assert wrong == []
    assert any(_INSTALL.search(p.read_text(encoding="utf-8")) for p in places if p.suffix == ".py")
