"""Values a schema offers itself, tried before any is invented.

A real tool checks more than its schema says: a time server wants a real IANA zone, an
order desk an order that exists. A made-up ``"example timezone 11"`` is valid for
``{"type": "string"}`` and fails the call. What the schema's author wrote down is far more
likely to work: a ``const``, the crew's kickoff input of the argument's name (the run's
``timezone`` for a ``timezone`` or ``source_timezone`` argument), ``examples``, an
example quoted in the description (``e.g. "A1002"``, ``(HH:MM)``), the ``default``, and
an ``enum``. Each candidate is kept only when it fits the schema's own constraints.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["NOTHING", "described", "fits", "from_inputs", "offered"]

NOTHING: Any = object()
"""No value offered: the caller invents one."""

_QUOTED_EXAMPLE = re.compile(  # "e.g. 'X'", "for example "X"", with straight or curly quotes
    r"(?:e\.g\.|for example|such as|example:)\s*,?\s*[\"'\u201c\u2018]([^\"'\u201d\u2019]+)", re.I
)
_TOKENS = (  # placeholders a description uses for a shape, longest first, with a value of that shape
    ("YYYY-MM-DDTHH:MM:SS", "2024-05-17T10:30:00"),
    ("YYYY-MM-DD", "2024-05-17"),
    ("HH:MM:SS", "10:30:00"),
    ("HH:MM", "10:30"),
)
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def offered(schema: Mapping[str, Any], name: str, inputs: Mapping[str, Any] | None, rng: random.Random) -> Any:
    """The value the schema (or the run) offers for the argument ``name``, else :data:`NOTHING`."""
    if "const" in schema:
        return schema["const"]
    given = from_inputs(name, inputs)
    if given is not NOTHING and fits(given, schema):
        return given
    for example in schema.get("examples") or ():
        if fits(example, schema):
            return example
    if "default" in schema and fits(schema["default"], schema):
        return schema["default"]
    if schema.get("enum"):
        return rng.choice(schema["enum"])
    return NOTHING


def from_inputs(name: str, inputs: Mapping[str, Any] | None) -> Any:
    """The kickoff input named like the argument: the same name, or its last words (``source_timezone``)."""
    if not inputs or not name:
        return NOTHING
    if name in inputs:
        return inputs[name]
    words = _words(name)
    best: tuple[int, Any] | None = None
    for key, value in inputs.items():
        wanted = _words(str(key))
        if wanted and words[-len(wanted) :] == wanted and (best is None or len(wanted) > best[0]):
            best = (len(wanted), value)
    return NOTHING if best is None else best[1]


def _words(name: str) -> list[str]:
    return [word.lower() for word in _WORDS.findall(name)]


def described(schema: Mapping[str, Any]) -> str | None:
    """A string the description gives as an example (``e.g. 'Europe/London'``, ``(HH:MM)``) that fits."""
    text = schema.get("description")
    if not isinstance(text, str):
        return None
    candidates = _QUOTED_EXAMPLE.findall(text)
    candidates += [value for token, value in _TOKENS if token in text]
    return next((c for c in candidates if fits(c, schema)), None)


def fits(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``value`` meets the schema's own constraints (type, enum, const, string and number bounds).

    Nested schemas are not followed: a candidate is a whole value the schema's author (or
    the run) gave, and a wrong guess costs one tool error the model reads, not a crash.
    """
    if "const" in schema and value != schema["const"]:
        return False
    if schema.get("enum") and value not in schema["enum"]:
        return False
    if not _fits_type(value, schema.get("type")):
        return False
    if isinstance(value, str):
        return _fits_string(value, schema)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _fits_number(value, schema)
    return True


def _fits_type(value: Any, kind: Any) -> bool:
    if kind is None:
        return True
    kinds = kind if isinstance(kind, list) else [kind]
    for one in kinds:
        allowed = _JSON_TYPES.get(one, ())
        if isinstance(value, allowed) and not (isinstance(value, bool) and one in ("integer", "number")):
            return True
    return False


def _fits_string(value: str, schema: Mapping[str, Any]) -> bool:
    if len(value) < schema.get("minLength", 0):
        return False
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        return False
    pattern = schema.get("pattern")
    try:
        return not pattern or re.search(pattern, value) is not None
    except re.error:
        return False


def _fits_number(value: float, schema: Mapping[str, Any]) -> bool:
    checks = (
        ("minimum", lambda bound: value >= bound),
        ("maximum", lambda bound: value <= bound),
        ("exclusiveMinimum", lambda bound: isinstance(bound, bool) or value > bound),
        ("exclusiveMaximum", lambda bound: isinstance(bound, bool) or value < bound),
        ("multipleOf", lambda step: not step or abs(value / step - round(value / step)) < 1e-9),
    )
    return all(check(schema[key]) for key, check in checks if key in schema)
