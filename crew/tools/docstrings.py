"""Reading Google-style docstrings: a summary for the model and one line per argument.

Only the layout that tools actually use is understood: a free-text summary, then
sections introduced by a header such as ``Args:`` whose entries are
``name: text`` or ``name (type): text`` with indented continuation lines. Anything
from the first section header on is left out of the summary, because ``Returns:``
and ``Raises:`` blocks tell the model nothing about when to call the tool.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

_ARGS_HEADERS = frozenset({"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"})
_OTHER_HEADERS = frozenset(
    {
        "returns",
        "return",
        "raises",
        "yields",
        "yield",
        "examples",
        "example",
        "note",
        "notes",
        "attributes",
        "see also",
        "warning",
        "warnings",
        "todo",
    }
)
_ENTRY = re.compile(r"^\*{0,2}(?P<name>[A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$")


@dataclass
class ParsedDocstring:
    summary: str
    args: dict[str, str] = field(default_factory=dict)
    has_args_section: bool = False


def parse_google_docstring(doc: str | None) -> ParsedDocstring:
    """Split a docstring into its summary and its ``Args:`` descriptions."""
    if not doc:
        return ParsedDocstring(summary="")
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    args: dict[str, str] = {}
    has_args = False
    section: str | None = None
    entry_indent: int | None = None
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        header = stripped[:-1].lower() if stripped.endswith(":") and indent == 0 else None
        if header in _ARGS_HEADERS or header in _OTHER_HEADERS:
            section = "args" if header in _ARGS_HEADERS else "other"
            has_args = has_args or section == "args"
            entry_indent = current = None
            continue
        if section is None:
            summary.append(line)
            continue
        if section != "args" or not stripped:
            continue
        if indent == 0:  # text back at the margin closes the section
            section = "other"
            continue
        if entry_indent is None:
            entry_indent = indent
        match = _ENTRY.match(stripped) if indent <= entry_indent else None
        if match:
            current = str(match["name"])
            args[current] = match["text"].strip()
        elif current is not None:
            args[current] = f"{args[current]} {stripped}".strip()
    return ParsedDocstring(summary="\n".join(summary).strip(), args=args, has_args_section=has_args)
