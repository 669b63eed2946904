"""Reading the Thought / Action / Action Input / Final Answer protocol out of a model's reply.

Models without native function calling answer in free text, and weak ones bend the
format: markdown around the markers, code fences around the input, Python-style
single-quoted dicts, prose after the JSON, an invented ``Observation:`` and even a
``Final Answer:`` after the action. The parser accepts all of that and reports what
it could not read, so the loop can send a short correction instead of failing.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

_DECOR = r"[ \t>*#_`-]*(?:\d{1,2}[.)])?[ \t*_`]*"  # markdown (and list numbers) weak models put before markers
_END = r"[ \t*_`]*:[ \t*_]*"  # no backticks after the colon: they open the fence of what follows
_FINAL = re.compile(rf"^{_DECOR}final[ _]?answer{_END}", re.I | re.M)
_ACTION = re.compile(rf"^{_DECOR}action{_END}(?P<name>.*?)(?=[ \t]*action[ _]?input\s*:|$)", re.I | re.M)
_INPUT = re.compile(rf"{_DECOR}action[ _]?input{_END}", re.I)
_STOP = re.compile(rf"^{_DECOR}(observation|thought|final[ _]?answer|action){_END}", re.I | re.M)
_THOUGHT = re.compile(rf"^{_DECOR}thought{_END}", re.I)
_NO_ACTION = frozenset({"none", "n/a", "no action", "null", "-"})
_FENCE = re.compile(r"^```[\w-]*[ \t]*\n?|\n?```[ \t]*$")
NO_JSON: Any = object()
"""What :func:`parse_json_lenient` returns when the text holds no JSON value."""


@dataclass(frozen=True, slots=True)
class Action:
    """A tool request. ``args`` is None when the input is not a JSON object (``raw_input`` keeps it)."""

    tool: str
    args: dict[str, Any] | None
    raw_input: str
    thought: str
    text: str  # the reply up to the end of the input: what goes back into the history


@dataclass(frozen=True, slots=True)
class FinalAnswer:
    answer: str
    thought: str


@dataclass(frozen=True, slots=True)
class Unparseable:
    """Nothing usable; ``reason`` is short enough to quote back to the model."""

    reason: str
    has_marker: bool  # an Action was there but its input was not usable


Parsed = Action | FinalAnswer | Unparseable


def parse_reply(text: str) -> Parsed:
    """Parse one reply; whichever of ``Action:`` and ``Final Answer:`` comes first wins.

    The first-wins rule matters: a model that writes an action and then imagines its
    observation and a final answer has not seen the tool's result yet. For the same
    reason only the first action is read: the reply is cut before a second one, so the
    history shows the model exactly the request that was answered.
    """
    final = _FINAL.search(text)
    action = _ACTION.search(text)
    if action and final and clean_tool_name(action.group("name")).lower() in _NO_ACTION:
        action = None  # "Action: None" followed by a final answer
    if action and (final is None or action.start() < final.start()):
        return _parse_action(text, action)
    if final:
        return FinalAnswer(answer=text[final.end() :].strip(), thought=_thought(text[: final.start()]))
    return Unparseable("neither 'Action:' nor 'Final Answer:' found", has_marker=False)


def _parse_action(text: str, action: re.Match[str]) -> Action | Unparseable:
    name = clean_tool_name(action.group("name"))
    if not name:
        return Unparseable("'Action:' without a tool name", has_marker=True)
    marker = _INPUT.search(text, action.end())
    if marker is None:
        return Unparseable("'Action:' without 'Action Input:'", has_marker=True)
    stop = _STOP.search(text, marker.end())
    end = stop.start() if stop else len(text)
    raw = text[marker.end() : end].strip()
    value = parse_json_lenient(raw) if raw else {}
    if value is NO_JSON or value is None:
        value = {} if raw.lower() in ("", "none", "null", "{}") else None
    args = value if isinstance(value, dict) else None
    return Action(
        tool=name,
        args=args,
        raw_input=_strip_fence(raw),
        thought=_thought(text[: action.start()]),
        text=text[:end].rstrip(),
    )


def clean_tool_name(name: str) -> str:
    """``**`Search Web`**``, ``[search_web]`` or ``search_web()`` all mean ``search_web``."""
    name = name.strip().splitlines()[0] if name.strip() else ""
    name = re.sub(r"\(.*\)\s*$", "", name)
    return name.strip(" \t*`'\"[]<>.:")


def _thought(prefix: str) -> str:
    return _THOUGHT.sub("", prefix.strip(), count=1).strip()


def _strip_fence(text: str) -> str:
    return _FENCE.sub("", text.strip()).strip()


def parse_json_lenient(text: str) -> Any:
    """The first JSON value in ``text``, tolerating fences, prose around it and single quotes.

    Returns ``NO_JSON`` when there is nothing to read, so callers can tell "no JSON"
    from a JSON ``null``.
    """
    text = _strip_fence(text)
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        try:
            return json.loads(text)
        except ValueError:
            return NO_JSON
    start = min(starts)
    try:
        value, _ = json.JSONDecoder().raw_decode(text, start)
        return value
    except ValueError:
        pass
    chunk = _balanced(text, start)
    if chunk is None:
        return NO_JSON
    for candidate in (chunk, _pythonize(chunk)):
        try:
            return ast.literal_eval(candidate)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
    return NO_JSON


def _balanced(text: str, start: int) -> str | None:
    """The bracketed span starting at ``start``, skipping brackets inside quotes."""
    pairs = {"{": "}", "[": "]"}
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in pairs:
            stack.append(pairs[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
            if not stack:
                return text[start : i + 1]
    return None


_JSON_WORDS = re.compile(r"\b(true|false|null)\b")


def _pythonize(chunk: str) -> str:
    """JSON literals to Python ones, for replies that mix single quotes with ``true``/``null``."""
    return _JSON_WORDS.sub(lambda m: {"true": "True", "false": "False", "null": "None"}[m.group(1)], chunk)
