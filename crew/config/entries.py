"""What a crew folder's declarations are made of: named entries with where they were written.

An ``Entry`` is one named agent, task, tool or server and its file, line and key path; a
``Placeholder`` a ``{name}`` in a templated text; a ``Resolved`` a value a CrewAI ``crew.py``
reader turned into its object already. The small helpers beside them (``key_path``,
``plain``, ``type_name``) are what every builder of a section speaks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crew.config.loader import YamlMap


@dataclass
class Entry:
    """One named agent, task or tool, with where it was written."""

    name: str
    data: Any
    file: str
    line: int
    path: str  # dotted key path, e.g. "agents.writer"

    def line_of(self, key: str) -> int:
        return self.data.line_of(key) if isinstance(self.data, YamlMap) and key in self.data else self.line

    def file_of(self, key: Any) -> str:
        return self.data.file_of(key, self.file) if isinstance(self.data, YamlMap) else self.file


@dataclass(frozen=True)
class Resolved:
    """A value already turned into its object (by the reader of a CrewAI crew.py), taken as it is."""

    obj: Any
    origin: str = ""  # the name it was written as, for `crew migrate`


@dataclass(frozen=True)
class Placeholder:
    """A ``{name}`` in a templated text, and where it appears."""

    name: str
    file: str
    line: int
    path: str


def plain(value: Any) -> Any:
    """The value with YAML containers turned back into plain dicts and lists."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def not_imported(name: str) -> Any:
    """A stand-in for a tool that ``--no-import`` did not import (it must not be run)."""

    def not_imported() -> str:
        raise RuntimeError(f"tool '{name}' was not imported (crew validate --no-import)")

    not_imported.__doc__ = f"Stand-in for tool '{name}', not imported."
    return not_imported


def key_path(*parts: Any) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part not in ("", None):
            out = f"{out}.{part}" if out else str(part)
    return out


def type_name(value: Any) -> str:
    if value is None:
        return "nothing"
    for kind, label in (
        (bool, "true/false"),
        (dict, "a mapping"),
        (list, "a list"),
        (str, "a string"),
        (int, "a number"),
        (float, "a number"),
    ):
        if isinstance(value, kind):
            return label
    return type(value).__name__
