"""``{placeholder}`` filling for task and agent texts.

Rules (the same everywhere a text is templated):

- ``{name}`` — a name made of letters (of any script), digits, ``_`` and ``-`` (not
  starting with a digit or ``-``) — is replaced by ``inputs[name]``; strings go in as they are,
  other values as JSON (numbers, lists, dicts) so the model reads them plainly.
- ``{{`` and ``}}`` are literal ``{`` and ``}`` (``str.format``'s escape).
- Any other brace is left alone, so JSON examples in a description need no escaping
  unless they contain ``}}``.
- In a path (``output_file``) inputs often come from outside (a web form): a path built
  from inputs stays inside its *output folder*, the literal folder written before the first
  placeholder (``out`` for ``out/{a}{b}/x.md``, the current folder for ``{p}.md``), after
  every expansion and normalisation. So no input may make it absolute, climb out with
  ``..`` (alone or assembled from several inputs: ``{a}{b}`` with ``.`` and ``.``), or
  reach ``$HOME``: ``~`` is expanded only when the YAML itself starts the path with it.
  A path with no placeholder keeps its literal meaning.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

_TOKEN = re.compile(r"\{\{|\}\}|\{([^\W\d][\w\-]*)\}")
"""``{{``, ``}}``, or ``{name}``: a name in any script (``{città}``, ``{名前}``) as Python identifiers are."""


def placeholders(text: str) -> list[str]:
    """The placeholder names in ``text``, in order of appearance, without repeats."""
    seen: dict[str, None] = {}
    for match in _TOKEN.finditer(text):
        if match.group(1):
            seen.setdefault(match.group(1))
    return list(seen)


def fill(text: str, inputs: Mapping[str, Any], *, where: str, errors: list[str]) -> str:
    """Fill ``text`` from ``inputs``; each missing placeholder appends a message to ``errors``.

    Collecting instead of raising lets the crew report every missing input at once.
    """

    def replace(match: re.Match[str]) -> str:
        key = match.group(1)
        if key is None:
            return match.group(0)[0]
        if key not in inputs:
            message = f"missing input '{key}' for {{{key}}} in {where}"
            if message not in errors:
                errors.append(message)
            return match.group(0)
        return _as_text(inputs[key])

    return _TOKEN.sub(replace, text)


def fill_path(template: str, inputs: Mapping[str, Any], *, owner: str, errors: list[str]) -> tuple[str, str | None]:
    """Fill the output path of ``owner`` (``task 'x'``); return it and its output folder (None: a literal path).

    A problem (a missing input, or inputs that would move the path out of its folder)
    appends a message to ``errors``. An input holding a ``..`` component (``/`` or ``\\``
    separated) is refused even where it would stay inside: such a path means to climb.
    """
    where = f"{owner} output_file"
    filled = fill(template, inputs, where=where, errors=errors)
    starts = [m.start() for m in _TOKEN.finditer(template) if m.group(1)]
    if not starts:  # nothing came from inputs: the path means what it says
        return os.path.expanduser(filled), None
    head = fill(template[: starts[0]], {}, where=where, errors=[])
    root = os.path.dirname(head) or "."
    if head.startswith("~/"):  # the YAML itself starts the path at home
        root, filled = os.path.expanduser(root), os.path.expanduser(filled)
    moved = _moved_by(template, inputs, head, root, filled)
    if moved is not None:
        errors.append(
            f"input {moved} would move the output_file of {owner} out of its folder '{root}' (to '{filled}'): "
            "a path built from inputs must stay inside the folder written before its first placeholder"
        )
    return filled, root


def _moved_by(template: str, inputs: Mapping[str, Any], head: str, root: str, filled: str) -> str | None:
    """The inputs (shown with their values) that move ``filled`` out of ``root``; None when it stays inside."""
    base, target = os.path.abspath(root), os.path.abspath(filled)
    keys = [k for k in placeholders(template) if k in inputs]
    climbing = [k for k in keys if ".." in re.split(r"[/\\]", _as_text(inputs[k]))]
    home = filled.startswith("~") and not head.startswith("~")  # would read as $HOME to a shell or a later expanduser
    if climbing or home or target == base or os.path.commonpath([base, target]) != base:
        return ", ".join(f"'{k}' ({_as_text(inputs[k])!r})" for k in (climbing or keys))
    return None


def inside_folder(path: str, root: str) -> bool:
    """Whether ``path`` stays inside ``root`` once symlinks are followed (for the write itself)."""
    from pathlib import Path

    real_root = Path(root).resolve()
    real = Path(path).resolve()
    return real != real_root and real.is_relative_to(real_root)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)
