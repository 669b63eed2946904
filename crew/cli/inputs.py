"""A kickoff's inputs from the command line: ``-i KEY=VALUE`` pairs and ``--inputs-file``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from crew.cli import UsageError


def input_pairs(items: list[str]) -> dict[str, Any]:
    """``-i key=value`` pairs; a value that parses as JSON (3, true, [1,2]) keeps its type."""
    from crew.config.loader import TooLarge, check_size

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"-i expects KEY=VALUE, got {item!r}")
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = value
        except RecursionError:
            raise UsageError(f"-i {key.strip()}: the value is nested too deeply") from None
        try:
            check_size(parsed)
        except TooLarge as exc:
            raise UsageError(f"-i {key.strip()}: the value is {exc.problem}") from None
        out[key.strip()] = parsed
    return out


def inputs_file(name: str | None) -> dict[str, Any]:
    """The inputs of ``--inputs-file``, read with the crew files' limits (depth, alias expansion)."""
    if name is None:
        return {}
    from crew.config.entries import plain
    from crew.config.loader import YamlSyntaxError, load_data

    path = Path(name)
    if not path.is_file():
        raise UsageError(f"--inputs-file {name}: no such file")
    if path.suffix.lower() not in (".json", ".yaml", ".yml"):
        raise UsageError(f"--inputs-file {name}: expected a .json, .yaml or .yml file")
    try:
        data = load_data(path)
    except YamlSyntaxError as exc:
        raise UsageError(f"{name}:{exc.line}: cannot read the inputs: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--inputs-file {name}: cannot read it: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"--inputs-file {name}: expected a mapping of input names to values")
    return {str(k): plain(v) for k, v in data.items()}
