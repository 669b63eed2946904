"""Small readers of Python syntax trees shared by the crew.py and script readers.

Each answers one question about a node (what a call is named, whether it is
``self.x()``, its literal arguments, its text as written) without running anything.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import Any


def decorator_names(node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The last name of each decorator: ``@CrewBase``, ``@project.agent``, ``@task()`` -> CrewBase, agent, task."""
    out = []
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Name):
            out.append(target.id)
        elif isinstance(target, ast.Attribute):
            out.append(target.attr)
    return out


def yaml_path(node: ast.expr) -> str | None:
    """The one literal ``.yaml`` path inside an expression that loads it, if there is exactly one."""
    paths = {
        n.value
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.endswith((".yaml", ".yml"))
    }
    return paths.pop() if len(paths) == 1 else None


def resolve_local(node: ast.expr, local: dict[str, ast.expr]) -> ast.expr:
    seen = 0
    while isinstance(node, ast.Name) and node.id in local and seen < 20:
        node, seen = local[node.id], seen + 1
    return node


def config_key(node: ast.expr, attr: str, local: dict[str, ast.expr]) -> str | None:
    node = resolve_local(node, local)
    if isinstance(node, ast.Subscript) and is_self_attr(node.value, attr):
        index = node.slice
        if isinstance(index, ast.Constant) and isinstance(index.value, str):
            return index.value
    return None


def is_self_attr(node: ast.expr, attr: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attr
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def self_call(node: ast.expr) -> str | None:
    """``self.x()`` -> "x"."""
    if (
        isinstance(node, ast.Call)
        and not node.args
        and not node.keywords
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "self"
    ):
        return node.func.attr
    return None


def callee_name(call: ast.Call) -> str | None:
    dotted = dotted_name(call.func)
    return dotted.rsplit(".", 1)[-1] if dotted else None


def dotted_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def literal_args(call: ast.Call) -> tuple[Any, ...] | None:
    try:
        return tuple(ast.literal_eval(arg) for arg in call.args)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def literal_kwargs(call: ast.Call) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            return None
        try:
            out[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
    return out


def code_text(source: str, node: ast.AST) -> str:
    """The node as written (one line, shortened), for messages."""
    text = _segment(source, node) or ast.unparse(node)
    text = " ".join(text.split())
    return text if len(text) <= 80 else text[:77] + "..."


@lru_cache(maxsize=16)
def _lines(source: str) -> list[bytes]:
    return [line.encode("utf-8") for line in source.splitlines(keepends=True)]


def _segment(source: str, node: ast.AST) -> str | None:
    """``ast.get_source_segment`` over lines split once per file (it splits the whole file on every call)."""
    start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
    lines = _lines(source)
    if start is None or end is None or col is None or end_col is None or end > len(lines):
        return None
    if start == end:
        return lines[start - 1][col:end_col].decode("utf-8", "replace")
    parts = [lines[start - 1][col:], *lines[start : end - 1], lines[end - 1][:end_col]]
    return b"".join(parts).decode("utf-8", "replace")


def head_text(source: str, node: ast.AST | None) -> str:
    """How to name a statement in a message: a compound one by its header (``for key in ...``)."""
    if node is None:
        return ""
    return (
        code_text(source, node).split(":")[0]
        if isinstance(node, (ast.For, ast.If, ast.While, ast.With, ast.Try))
        else code_text(source, node)
    )
