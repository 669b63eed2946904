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
    args: dict[str, str] = field(default_factory=dict[str, str])
    has_args_section: bool = False


def parse_google_docstring(doc: str | None) -> ParsedDocstring:
    """Split a docstring into its summary and its ``Args:`` descriptions."""
    if not doc:
        return ParsedDocstring(summary="")
    summary: list[str] = []
    reader = _ArgsReader()
    section: str | None = None
    for line in inspect.cleandoc(doc).splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        header = stripped[:-1].lower() if stripped.endswith(":") and indent == 0 else None
        if header in _ARGS_HEADERS or header in _OTHER_HEADERS:
            section = "args" if header in _ARGS_HEADERS else "other"
            reader.open(section == "args")
        elif section is None:
            summary.append(line)
        elif section == "args" and stripped and not reader.read(stripped, indent):
            section = "other"  # text back at the margin closes the section
    return ParsedDocstring(summary="\n".join(summary).strip(), args=reader.args, has_args_section=reader.seen)


class _ArgsReader:
    """The entries of ``Args:`` sections: ``name (type): text``, continued on deeper-indented lines."""

    __slots__ = ("args", "current", "entry_indent", "seen")

    def __init__(self) -> None:
        self.args: dict[str, str] = {}
        self.seen = False  # whether the docstring has an Args section at all
        self.entry_indent: int | None = None
        self.current: str | None = None

    def open(self, is_args: bool) -> None:
        """A section header: entries start afresh."""
        self.seen = self.seen or is_args
        self.entry_indent = self.current = None

    def read(self, stripped: str, indent: int) -> bool:
        """Read one non-blank line of the section; False when it is back at the margin (the section ends)."""
        if indent == 0:
            return False
        if self.entry_indent is None:
            self.entry_indent = indent
        match = _ENTRY.match(stripped) if indent <= self.entry_indent else None
        if match:
            self.current = str(match["name"])
            self.args[self.current] = match["text"].strip()
        elif self.current is not None:
            self.args[self.current] = f"{self.args[self.current]} {stripped}".strip()
        return True
