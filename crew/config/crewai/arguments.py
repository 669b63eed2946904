"""One keyword argument of a CrewAI ``Agent(...)``, ``Task(...)`` or ``Crew(...)`` call, read as data.

A literal is a value; ``self.x()`` a reference to another member; ``tools=[...]``,
``knowledge_sources=[...]`` and ``llm=LLM(...)`` have readers of their own; a bare name is an
object to resolve later; anything else is unreadable, and said so with its line.
"""

from __future__ import annotations

import ast
from typing import Any

from crew.config.crewai.plan import Arg, CrewPlan, ToolRef
from crew.config.crewai.syntax import (
    callee_name,
    code_text,
    dotted_name,
    literal_args,
    literal_kwargs,
    resolve_local,
    self_call,
)


def _value_of(node: ast.expr, local: dict[str, ast.expr], plan: CrewPlan) -> ast.expr:
    """What a keyword's expression stands for: a local name's value, a class attribute's (``self.llm``)."""
    node = resolve_local(node, local)
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
        and node.attr in plan.class_attrs
    ):
        plan.attrs_read.add(node.attr)
        return plan.class_attrs[node.attr]
    return node


def _arg(key: str, node: ast.expr, local: dict[str, ast.expr], source: str, plan: CrewPlan, path: str) -> Arg:
    node = _value_of(node, local, plan)
    text = code_text(source, node)
    if key == "tools":
        return _tools_arg(node, local, source, plan)
    if key == "knowledge_sources":
        return _knowledge_arg(node, local, source, plan)
    if key == "llm" or key.endswith("_llm"):
        if isinstance(node, ast.Name) and node.id in plan.assigns:
            node = plan.assigns[node.id]  # llm = LLM(model=...) at module level
            text = code_text(source, node)
        special = _llm_arg(node, text)
    else:
        special = _reference_arg(key, node, local, text)
    if special is not None:
        return special
    try:
        return Arg("literal", ast.literal_eval(node), node.lineno, text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.Name):
        return Arg("object", node.id, node.lineno, text)
    return Arg("unreadable", text, node.lineno, text)


def _reference_arg(key: str, node: ast.expr, local: dict[str, ast.expr], text: str) -> Arg | None:
    """``agent=self.x()``, ``context=[self.a(), ...]`` and ``process=Process.x``: names, not values."""
    if key in ("agent", "manager_agent"):
        name = self_call(node)
        return Arg("agent", name, node.lineno, text) if name is not None else None
    if key == "context" and isinstance(node, (ast.List, ast.Tuple)):
        names = [self_call(resolve_local(item, local)) for item in node.elts]
        return Arg("tasks", names, node.lineno, text) if all(names) else None
    if key == "process" and isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return Arg("literal", node.attr, node.lineno, text)
    return None


def _tools_arg(node: ast.expr, local: dict[str, ast.expr], source: str, plan: CrewPlan) -> Arg:
    text = code_text(source, node)
    if isinstance(node, (ast.List, ast.Tuple)):
        refs = [_tool_ref(_value_of(item, local, plan), source, plan) for item in node.elts]
        if all(r is not None for r in refs):
            return Arg("tools", refs, node.lineno, text)
    return Arg("unreadable", text, node.lineno, text)


_SOURCES = {
    "StringKnowledgeSource": None,
    "TextFileKnowledgeSource": "text",
    "PDFKnowledgeSource": "pdf",
    "CSVKnowledgeSource": "csv",
    "JSONKnowledgeSource": "json",
}


def _knowledge_arg(node: ast.expr, local: dict[str, ast.expr], source: str, plan: CrewPlan) -> Arg:
    """``knowledge_sources=[PDFKnowledgeSource(file_paths=[...]), name, ...]``: each source as the
    ``knowledge:`` item crew.yaml would write (a module-level ``name = XSource(...)`` is followed)."""
    text = code_text(source, node)
    if not isinstance(node, (ast.List, ast.Tuple)):
        plan.error(node.lineno, "knowledge_sources", f"`{text}`: crew reads a list of knowledge sources")
        return Arg("unreadable", text, node.lineno, text)
    items = [_knowledge_item(_value_of(item, local, plan), source, plan) for item in node.elts]
    if None in items:
        return Arg("unreadable", text, node.lineno, text)
    return Arg("knowledge", items, node.lineno, text)


def _knowledge_item(node: ast.expr, source: str, plan: CrewPlan) -> dict[str, Any] | None:
    if isinstance(node, ast.Name) and isinstance(plan.assigns.get(node.id), ast.Call):
        node = plan.assigns[node.id]  # pdf_source = PDFKnowledgeSource(...) at module level
    text = code_text(source, node)
    name = callee_name(node) if isinstance(node, ast.Call) else None
    if not isinstance(node, ast.Call) or name not in _SOURCES:
        plan.error(
            node.lineno, "knowledge_sources", f"`{text}`: crew reads {', '.join(_SOURCES)} here, called with literals"
        )
        return None
    kwargs = {kw.arg: _literal(kw.value, plan) for kw in node.keywords if kw.arg}
    if node.args or any(v is _UNREAD for v in kwargs.values()):
        plan.error(
            node.lineno, "knowledge_sources", f"`{text}`: crew reads knowledge sources whose arguments are literals"
        )
        return None
    item = {k: kwargs[k] for k in ("chunk_size", "chunk_overlap", "metadata", "content") if k in kwargs}
    if _SOURCES[name] is not None:
        files = kwargs.get("file_paths", kwargs.get("file_path", []))
        item |= {"files": [files] if isinstance(files, str) else list(files), "type": _SOURCES[name]}
    return item


_UNREAD = object()


def _literal(node: ast.expr, plan: CrewPlan) -> Any:
    """A literal, or a module-level name bound to one (``content = "..."``)."""
    if isinstance(node, ast.Name) and node.id in plan.assigns:
        node = plan.assigns[node.id]
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNREAD


def _llm_arg(node: ast.expr, text: str) -> Arg | None:
    """``LLM(model=..., ...)`` with literal settings."""
    if not (isinstance(node, ast.Call) and callee_name(node) == "LLM"):
        return None
    settings = literal_kwargs(node)
    if settings is not None and not node.args:
        return Arg("llm", settings, node.lineno, text)
    if len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and settings is not None:
        return Arg("llm", {"model": node.args[0].value, **settings}, node.lineno, text)
    return None


def _tool_ref(node: ast.expr, source: str, plan: CrewPlan) -> ToolRef | None:
    text = code_text(source, node)
    name = self_call(node)
    if name is not None:
        ref = plan.tool_methods.get(name)
        if ref is None:
            plan.error(node.lineno, name, f"`{text}`: no @tool method '{name}' returning a tool in {plan.class_name}")
        return ref
    if isinstance(node, ast.Name) and isinstance(plan.assigns.get(node.id), ast.Call):
        node = plan.assigns[node.id]  # search_tool = SerperDevTool() at module level
    if isinstance(node, ast.Call):
        callee = dotted_name(node.func)
        kwargs = literal_kwargs(node)
        args = literal_args(node)
        if callee is not None and kwargs is not None and args is not None:
            return ToolRef(callee, True, kwargs, node.lineno, text, args)
        plan.error(node.lineno, "tools", f"`{text}`: crew reads tool calls whose arguments are literals")
        return None
    dotted = dotted_name(node)
    if dotted is not None:
        return ToolRef(dotted, False, {}, node.lineno, text)
    plan.error(node.lineno, "tools", f"`{text}` is composed at run time; crew cannot read this tool")
    return None
