"""``{placeholder}`` filling for task and agent texts.

Rules (the same everywhere a text is templated):

- ``{name}`` — a name made of letters, digits, ``_`` and ``-`` (not starting with a
  digit or ``-``) — is replaced by ``inputs[name]``; strings go in as they are,
  other values as JSON (numbers, lists, dicts) so the model reads them plainly.
- ``{{`` and ``}}`` are literal ``{`` and ``}`` (``str.format``'s escape).
- Any other brace is left alone, so JSON examples in a description need no escaping
  unless they contain ``}}``.
- In a path (``output_file``) an input may not hold a ``..`` component: inputs often come
  from outside (a web form), and ``out/{topic}.md`` must not write ``out/../../x.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_\-]*)\}")


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


def climbing_inputs(template: str, inputs: Mapping[str, Any]) -> list[str]:
    """The placeholders of path ``template`` whose input value has a ``..`` path component."""
    return [
        key for key in placeholders(template) if key in inputs and ".." in re.split(r"[/\\]", _as_text(inputs[key]))
    ]


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)
