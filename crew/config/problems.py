"""Collecting what is wrong with a crew folder, to report it all at once.

Each problem knows its file, line and dotted key path, and prints as
``<file>:<line>: <key.path>: <message>`` so editors and terminals can jump to it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from crew.errors import ConfigError

Level = Literal["error", "warning", "note"]


def display_path(path: Path) -> str:
    """The path relative to the working directory when it lies below it (shorter, clickable)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if rel.startswith("..") else rel


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    path: str
    message: str
    level: Level = "error"

    def __str__(self) -> str:
        prefix = "" if self.level == "error" else f"{self.level}: "
        where = f"{self.file}:{self.line}: " if self.file else ""
        key = f"{self.path}: " if self.path else ""
        return f"{where}{key}{prefix}{self.message}"


@dataclass
class Problems:
    """Everything found so far, in the order it was found."""

    items: list[Problem] = field(default_factory=list)

    def add(self, file: str, line: int, path: str, message: str, level: Level = "error") -> None:
        self.items.append(Problem(file, line, path, message, level))

    def of(self, level: Level) -> list[Problem]:
        return [p for p in self.items if p.level == level]

    @property
    def errors(self) -> list[Problem]:
        return self.of("error")

    def raise_errors(self) -> None:
        """Raise one ConfigError holding every error line (by file, then line), if there is any.

        The warnings ride along as ``exc.warnings``, so they are not lost when the
        errors stop the load.
        """
        errors = self.errors
        if errors:
            files = list(dict.fromkeys(p.file for p in self.items))
            ordered = sorted(errors, key=lambda p: (files.index(p.file), p.line))
            lines = [str(p) for p in ordered]
            exc = ConfigError("\n".join(lines), errors=lines)
            exc.warnings = [str(p) for p in self.of("warning")]  # type: ignore[attr-defined]
            raise exc
