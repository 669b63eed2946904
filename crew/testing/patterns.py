"""Strings that match a regular expression, for the regex subset JSON schemas use.

JSON schemas (pydantic's ``Field(pattern=...)``, an MCP server's ``inputSchema``) use
regexes to describe codes and identifiers: literals, classes (``[A-Z0-9_-]``, ``\\d``,
``\\w``), groups, alternation, quantifiers and anchors. This module reads that subset
itself, so it depends on no private part of the standard library (``re._parser`` has no
stub and may change in any Python release). Whatever it cannot read (a backreference, a
conditional) raises :class:`Unsupported`, and the caller falls back to common strings.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["Unsupported", "sample"]

Ranges = tuple[tuple[int, int], ...]


class Unsupported(ValueError):
    """A construct outside the subset this generator reads."""


_DIGITS: Ranges = ((48, 57),)
_WORD: Ranges = ((97, 122), (65, 90), (48, 57), (95, 95))
_SPACE: Ranges = ((32, 32), (9, 10), (13, 13))
_CATEGORIES: dict[str, tuple[Ranges, bool]] = {
    "d": (_DIGITS, False),
    "w": (_WORD, False),
    "s": (_SPACE, False),
    "D": (_DIGITS, True),
    "W": (_WORD, True),
    "S": (_SPACE, True),
}
_ESCAPED = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "0": "\0"}
_ZERO_WIDTH = frozenset("bBAZz")
_POOL = "xyzabcXYZ0123456789-_. "
"""Where a negated class (``[^,]``, ``\\D``) finds its character: the first one it does not exclude."""


@dataclass(frozen=True)
class _Set:
    ranges: Ranges
    negated: bool = False

    def contains(self, char: str) -> bool:
        code = ord(char)
        return any(low <= code <= high for low, high in self.ranges) != self.negated

    def pick(self, rng: random.Random) -> str:
        if self.negated:
            for char in _POOL:
                if self.contains(char):
                    return char
            raise Unsupported("a negated class that excludes every common character")
        low, high = rng.choice(self.ranges)
        return chr(rng.randint(low, min(high, low + 25)))


@dataclass(frozen=True)
class _Union:
    """A class of several parts (``[\\dA-F]``, ``[^\\s,]``): a character in any part, or in none when negated."""

    parts: tuple[_Set, ...]
    negated: bool = False

    def contains(self, char: str) -> bool:
        return any(part.contains(char) for part in self.parts) != self.negated

    def pick(self, rng: random.Random) -> str:
        candidates = [part.pick(rng) for part in self.parts if not part.negated or not self.negated]
        candidates += list(_POOL)
        for char in candidates:
            if self.contains(char):
                return char
        raise Unsupported("a character class no common character satisfies")


Node = tuple  # ("lit", str) | ("set", _Set | _Union) | ("seq", [Node]) | ("alt", [Node]) | ("rep", Node, lo, hi)


class _Parser:
    """A recursive-descent reader of one pattern into a small tree of nodes."""

    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.at = 0

    def parse(self) -> Node:
        node = self._alternation()
        if self.at < len(self.text):
            raise Unsupported(f"unbalanced ')' at {self.at}")
        return node

    def _peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def _take(self) -> str:
        char = self._peek()
        if not char:
            raise Unsupported("the pattern ends too early")
        self.at += 1
        return char

    def _alternation(self) -> Node:
        branches = [self._sequence()]
        while self._peek() == "|":
            self.at += 1
            branches.append(self._sequence())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def _sequence(self) -> Node:
        items: list[Node] = []
        while self._peek() not in ("", "|", ")"):
            atom = self._atom()
            items.append(self._quantified(atom))
        return ("seq", items)

    def _atom(self) -> Node:
        char = self._take()
        if char == "(":
            return self._group()
        if char == "[":
            return ("set", self._class())
        if char == "\\":
            return self._escape(in_class=False)
        if char in "^$":
            return ("seq", [])
        if char == ".":
            return ("lit", "x")
        if char in "*+?":
            raise Unsupported(f"nothing to repeat at {self.at - 1}")
        return ("lit", char)

    def _group(self) -> Node:
        lookaround = False
        if self._peek() == "?":
            self.at += 1
            lookaround = self._group_kind()
        inner = self._alternation()
        if self._take() != ")":
            raise Unsupported("a group is not closed")
        return ("seq", []) if lookaround else inner

    def _group_kind(self) -> bool:
        """After ``(?``: True for a lookaround (matches nothing itself); groups that capture or not read on."""
        kind = self._take()
        if kind == ":" or kind == ">":
            return False
        if kind in "=!":
            return True
        if kind == "<" and self._peek() in "=!":
            self.at += 1
            return True
        if kind in "P<" and self._skip_name(kind):
            return False
        raise Unsupported(f"the group construct '(?{kind}' is not supported")

    def _skip_name(self, kind: str) -> bool:
        if kind == "P" and self._take() != "<":
            return False
        end = self.text.find(">", self.at)
        if end < 0:
            raise Unsupported("a group name is not closed")
        self.at = end + 1
        return True

    def _escape(self, *, in_class: bool) -> Node:
        char = self._take()
        if char in _CATEGORIES:
            ranges, negated = _CATEGORIES[char]
            return ("set", _Set(ranges, negated))
        if char in _ZERO_WIDTH and not in_class:
            return ("seq", [])
        if char.isdigit() and char != "0":
            raise Unsupported("backreferences are not supported")
        if char in "xu":
            return ("lit", self._code(2 if char == "x" else 4))
        return ("lit", _ESCAPED.get(char, char))

    def _code(self, digits: int) -> str:
        code = self.text[self.at : self.at + digits]
        self.at += digits
        try:
            return chr(int(code, 16))
        except ValueError:
            raise Unsupported(f"a bad character code {code!r}") from None

    def _class(self) -> _Set | _Union:
        negated = self._peek() == "^"
        if negated:
            self.at += 1
        parts: list[_Set] = []
        first = True
        while first or self._peek() != "]":
            first = False
            parts.append(self._class_item())
        self.at += 1
        plain = [p for p in parts if not p.negated]
        if len(plain) == len(parts):
            return _Set(tuple(r for p in parts for r in p.ranges), negated)
        return _Union(tuple(parts), negated)

    def _class_item(self) -> _Set:
        low = self._class_char()
        if isinstance(low, _Set):
            return low
        if self._peek() == "-" and self.text[self.at + 1 : self.at + 2] not in ("]", ""):
            self.at += 1
            high = self._class_char()
            if isinstance(high, _Set) or ord(high) < ord(low):
                raise Unsupported("a bad range in a character class")
            return _Set(((ord(low), ord(high)),))
        return _Set(((ord(low), ord(low)),))

    def _class_char(self) -> str | _Set:
        char = self._take()
        if char != "\\":
            return char
        node = self._escape(in_class=True)
        return node[1]

    def _quantified(self, atom: Node) -> Node:
        bounds = self._bounds()
        if bounds is None:
            return atom
        if self._peek() in ("?", "+"):  # lazy or possessive: the same strings match
            self.at += 1
        return ("rep", atom, *bounds)

    def _bounds(self) -> tuple[int, int | None] | None:
        char = self._peek()
        if char in ("*", "+", "?"):
            self.at += 1
            return {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
        if char != "{":
            return None
        end = self.text.find("}", self.at)
        body = self.text[self.at + 1 : end] if end > 0 else ""
        low, comma, high = body.partition(",")
        if not low.isdigit() or (high and not high.isdigit()):
            return None  # a literal "{", as Python reads it
        self.at = end + 1
        return int(low), (int(high) if high else None) if comma else int(low)


def _emit(node: Node, rng: random.Random, out: list[str]) -> None:
    kind = node[0]
    if kind == "lit":
        out.append(node[1])
    elif kind == "set":
        out.append(node[1].pick(rng))
    elif kind == "seq":
        for item in node[1]:
            _emit(item, rng, out)
    elif kind == "alt":
        _emit(rng.choice(node[1]), rng, out)
    else:
        _, inner, low, high = node
        top = low + 2 if high is None else min(high, low + 2)
        for _ in range(rng.randint(low, top)):
            _emit(inner, rng, out)


def sample(pattern: str, rng: random.Random) -> str:
    """One string the pattern describes (anchored or not); raises :class:`Unsupported` past the subset."""
    tree = _Parser(pattern).parse()
    out: list[str] = []
    _emit(tree, rng, out)
    return "".join(out)
