"""A CrewAI project's ``.env``: read as CrewAI reads it, into the environment, never over it.

CrewAI calls python-dotenv's ``load_dotenv()`` when it is imported, so a project's ``.env``
(``crewai create`` writes ``MODEL=...`` and the provider's key there) fills the variables the
environment does not already set. crew does the same without python-dotenv: the common
``KEY=value`` lines, ``export KEY=value``, quotes and comments. Values whose names look like
credentials are registered with the scrubber before anything can print or store them; the
line crew prints names the file and the variables, never a value.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(.*)$")
_ESCAPES = {"\\n": "\n", "\\t": "\t", '\\"': '"', "\\\\": "\\"}

# The variables CrewAI takes the default model from, in its order.
MODEL_VARIABLES = ("MODEL", "MODEL_NAME", "OPENAI_MODEL_NAME")


@dataclass
class DotEnv:
    """What one ``.env`` gave: the file, and the names it set (those already set were kept)."""

    path: Path
    set: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def find(folder: Path) -> Path | None:
    """The ``.env`` of the project: in the crew folder or a folder above it, up to the project's root
    (the folder with ``pyproject.toml``; the crew folder itself when there is none), never above it,
    and never a link to a file outside its folder."""
    folder = folder.resolve()
    root = next((p for p in (folder, *folder.parents) if (p / "pyproject.toml").is_file()), folder)
    for candidate in (folder, *folder.parents):
        path = candidate / ".env"
        if path.is_file() and path.resolve().is_relative_to(candidate):
            return path
        if candidate == root:
            return None
    return None


def parse(text: str) -> dict[str, str]:
    """The ``KEY=value`` pairs of a ``.env`` text (later lines win, as in python-dotenv)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is not None and not line.lstrip().startswith("#"):
            values[match.group(1)] = _value(match.group(2).strip())
    return values


def _value(raw: str) -> str:
    if raw.startswith("'") and "'" in raw[1:]:
        return raw[1 : raw.index("'", 1)]  # single quotes: as written
    if raw.startswith('"') and '"' in raw[1:]:
        return _double_quoted(raw)
    return re.split(r"\s+#", raw, maxsplit=1)[0].strip()  # unquoted: up to a comment


def _double_quoted(raw: str) -> str:
    out, i = [], 1
    while i < len(raw) and raw[i] != '"':
        pair = raw[i : i + 2]
        if pair in _ESCAPES:
            out.append(_ESCAPES[pair])
            i += 2
        else:
            out.append(raw[i])
            i += 1
    return "".join(out)


def load(folder: Path) -> DotEnv | None:
    """Fill the environment from the project's ``.env`` (None without one); set variables are kept."""
    from crew.common.secrets import looks_secret, register

    path = find(folder)
    if path is None:
        return None
    try:
        values = parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    found = DotEnv(path)
    for name, value in values.items():
        if looks_secret(name):
            register(value)  # masked from here on, whether it is used or the environment's own wins
        if name in os.environ:
            found.kept.append(name)
        else:
            os.environ[name] = value
            found.set.append(name)
    return found


def model() -> str | None:
    """The default model CrewAI would use from the environment (``MODEL`` ...); None when none is set."""
    return next((os.environ[name] for name in MODEL_VARIABLES if os.environ.get(name, "").strip()), None)
