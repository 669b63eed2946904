"""The scripts beside a CrewAI crew (``main.py`` ...): their default inputs, and what they drive.

``main.py``'s ``run()`` usually says ``inputs = {'topic': 'AI LLMs', 'current_year':
str(datetime.now().year)}`` and calls ``.crew().kickoff(inputs=inputs)``: those are the
crew's default inputs, read as data (with the few date expressions templates use). A
script that runs tasks itself (``task.execute()``) or builds its own ``Crew(...)`` at
run time is refused: crew runs the declared crew, not the script.
"""

from __future__ import annotations

import ast
from datetime import date, datetime
from pathlib import Path
from typing import Any

from crew.config.crewai.plan import Issue
from crew.config.crewai.reader import DRIVING, driving_calls


def read_script(path: Path, *, has_crew_file: bool) -> tuple[dict[str, Any], list[Issue]]:
    """(default inputs, issues) of one script beside ``config/``."""
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(path))
    except (SyntaxError, OSError, UnicodeDecodeError, ValueError):
        return {}, []  # not ours to judge: crew never runs it
    issues = [
        Issue(
            line, "", f"`{code}` runs a task from Python code; crew runs the declared crew itself and cannot honour it"
        )
        for line, code in driving_calls(tree, source)
    ]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node.func).rsplit(".", 1)[-1] == "Crew":
            issues.append(
                Issue(
                    node.lineno,
                    "",
                    "this script composes its own Crew(...) at run time; crew reads the @CrewBase class of "
                    "crew.py (move the agents and tasks there, or to agents.yaml and tasks.yaml)"
                    if has_crew_file
                    else "a Crew(...) composed by a script at run time: crew reads a @CrewBase class "
                    "(crew.py with @agent, @task and @crew methods) or agents.yaml and tasks.yaml, never a script",
                )
            )
            break
    inputs, notes = _inputs(tree, source)
    return inputs, issues + notes


def crew_import(path: Path) -> int | None:
    """The line where a script imports crew itself (and not CrewAI): such a script is crew's own Python
    (an app serving a crew, like ``examples/web_stream``), not a CrewAI project's; None otherwise."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, OSError, UnicodeDecodeError, ValueError):
        return None
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.setdefault(node.module.split(".")[0], node.lineno)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found.setdefault(alias.name.split(".")[0], node.lineno)
    return found.get("crew") if "crewai" not in found else None


def read_inputs(path: Path) -> tuple[dict[str, Any], list[Issue]]:
    """The default inputs a file passes to ``kickoff`` (``if __name__ == "__main__":`` blocks too)."""
    try:
        source = path.read_text(encoding="utf-8")
        return _inputs(ast.parse(source, filename=str(path)), source)
    except (SyntaxError, OSError, UnicodeDecodeError, ValueError):
        return {}, []


def _inputs(tree: ast.Module, source: str) -> tuple[dict[str, Any], list[Issue]]:
    """The first inputs dict of ``run()``, else of the module; computed values are left out with a note."""
    run = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run"), None)
    for scope in ([run] if run is not None else []) + [tree]:
        found = _inputs_dict(scope)
        if found is not None:
            return _evaluate(found, source)
    return {}, []


def _inputs_dict(scope: ast.AST) -> ast.Dict | None:
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and _names_inputs(node.targets):
            return node.value
        if isinstance(node, ast.Call) and _name(node.func) == "kickoff":
            for keyword in node.keywords:
                if keyword.arg == "inputs" and isinstance(keyword.value, ast.Dict):
                    return keyword.value
    return None


def _names_inputs(targets: list[ast.expr]) -> bool:
    return any(isinstance(t, ast.Name) and t.id == "inputs" for t in targets)


def _evaluate(node: ast.Dict, source: str) -> tuple[dict[str, Any], list[Issue]]:
    out: dict[str, Any] = {}
    notes: list[Issue] = []
    for key_node, value_node in zip(node.keys, node.values, strict=True):
        if not (isinstance(key_node, ast.Constant) and isinstance(key_node.value, str)):
            continue
        try:
            out[key_node.value] = _value(value_node)
            if not _literal(value_node):  # a date expression: this run's value, not a constant
                code = ast.get_source_segment(source, value_node) or ast.unparse(value_node)
                notes.append(Issue(value_node.lineno, f"inputs.{key_node.value}", f"`{code}` {DATED}", "note"))
        except ValueError:
            code = ast.get_source_segment(source, value_node) or ast.unparse(value_node)
            notes.append(
                Issue(
                    value_node.lineno,
                    f"inputs.{key_node.value}",
                    f"`{code}` is computed at run time: not a default (pass -i {key_node.value}=...)",
                    "warning",
                )
            )
    return out, notes


DATED = "is computed at run time: each run takes the value of its day"
"""The note on an input a date expression makes (``crew migrate`` can only write one day's value)."""


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


_NOW = {"now", "today", "utcnow"}


def _value(node: ast.expr) -> Any:
    """A literal, or one of the date expressions CrewAI's templates put in inputs."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    for read in (_conversion, _now, _date_part, _formatted):
        value = read(node)
        if value is not _NOT:
            return value
    raise ValueError("not a literal")


_NOT = object()  # what a reader below returns for an expression it does not read


def _conversion(node: ast.expr) -> Any:
    """``str(...)`` or ``int(...)`` of a readable value."""
    if isinstance(node, ast.Call) and _name(node.func) in ("str", "int") and len(node.args) == 1 and not node.keywords:
        inner = _value(node.args[0])
        return str(inner) if _name(node.func) == "str" else int(inner)
    return _NOT


def _now(node: ast.expr) -> Any:
    """``datetime.now()``, ``date.today()`` and their kin."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _NOW):
        return _NOT
    base = _name(node.func.value)
    if node.args:
        return _NOT
    if base in ("datetime", "datetime.datetime"):
        return datetime.now()
    if base in ("date", "datetime.date"):
        return date.today()
    return _NOT


def _date_part(node: ast.expr) -> Any:
    """``<moment>.year`` (or month, day)."""
    if isinstance(node, ast.Attribute) and node.attr in ("year", "month", "day"):
        return getattr(_moment(node.value), node.attr)
    return _NOT


def _formatted(node: ast.expr) -> Any:
    """``<moment>.isoformat()`` or ``<moment>.strftime("<literal format>")``."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("strftime", "isoformat")
    ):
        return _NOT
    moment = _moment(node.func.value)
    if node.func.attr == "isoformat" and not node.args:
        return moment.isoformat()
    if len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return moment.strftime(node.args[0].value)
    return _NOT


def _moment(node: ast.expr) -> date:
    value = _value(node)
    if not isinstance(value, date):
        raise ValueError("not a date")
    return value


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _name(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    return ""


__all__ = ["DATED", "DRIVING", "crew_import", "read_inputs", "read_script"]
