"""Reading a JSON file as it streams in: indented ``key: value`` lines, memory bounded.

The text comes in 64 KB pieces (``readers.text_pieces``, which locates a byte that is not UTF-8)
into a buffer whose consumed part is dropped as the reading goes on. An array's items and an
object's members are read one at a time: an item that fits in the buffer is parsed by the
standard library's decoder (C speed); one that does not (or does not parse) is read the same
way, one level down, so only a single string or number has to fit in memory whole, however
large the file. Invalid JSON is an error at its line and column, with the standard library's
words for what is wrong (``Expecting ',' delimiter``).

A ``.jsonl`` or ``.ndjson`` file is a sequence of documents (JSON Lines), read as a list of them.
The lines written are CrewAI's (``key: value``, nested values indented under their key, list
items as ``- value``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from crew.knowledge.readers import BLOCK, located, text_pieces

SEQUENCE_SUFFIXES = (".jsonl", ".ndjson")
"""File names whose text is a sequence of JSON documents (JSON Lines), not one document."""

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
_NUMBER_END = re.compile(r"[^0-9eE.+-]")


def json_pieces(path: Path, label: str) -> Iterator[str]:
    """The JSON of ``path`` as indented ``key: value`` lines, read as it streams in."""
    stream = _Stream(text_pieces(path, label), label)
    try:
        if path.suffix.lower() in SEQUENCE_SUFFIXES:
            while stream.peek():
                yield from stream.item(0)
            return
        yield from stream.value(0)
        if stream.peek():
            raise stream.error("Extra data")
    except RecursionError:
        raise stream.error("nested too deeply") from None


def json_lines(data: Any, level: int) -> Iterator[str]:
    """A parsed JSON value as CrewAI writes it: ``key: value`` lines, nested values indented."""
    indent = "  " * level
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, dict | list):
                yield f"{indent}{key}:\n"
                yield from json_lines(value, level + 1)
            else:
                yield f"{indent}{key}: {value}\n"
    elif isinstance(data, list):
        for item in data:
            if isinstance(item, dict | list):
                yield f"{indent}-\n"
                yield from json_lines(item, level + 1)
            else:
                yield f"{indent}- {item}\n"
    else:
        yield f"{indent}{data}\n"


class _Stream:
    """The file's text as a sliding buffer, and the reading of values from it.

    ``buf[pos:]`` is what is not read yet; ``line`` and ``column`` are where ``buf[0]`` is in the file.
    """

    def __init__(self, pieces: Iterator[str], label: str) -> None:
        self.pieces = pieces
        self.label = label
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.line = 1
        self.column = 1

    # -- values -------------------------------------------------------------------------------
    def value(self, level: int) -> Iterator[str]:
        """The lines of the value that starts here (after white space)."""
        first = self.peek()
        if first in ("{", "["):
            whole = self._whole()
            if whole is not None:
                yield from json_lines(whole, level)
            elif first == "{":
                yield from self._members(level)
            else:
                yield from self._items(level)
        else:
            yield f"{'  ' * level}{self._scalar()}\n"

    def item(self, level: int) -> Iterator[str]:
        """One item of a list, as ``- value`` (a nested value under a ``-`` of its own)."""
        if self.peek() in ("{", "["):
            yield f"{'  ' * level}-\n"
            yield from self.value(level + 1)
        else:
            yield f"{'  ' * level}- {self._scalar()}\n"

    def _members(self, level: int) -> Iterator[str]:
        self.pos += 1  # {
        if self._next_is("}"):
            return
        while True:
            if self.peek() != '"':
                raise self.error("Expecting property name enclosed in double quotes")
            key = self._scalar()
            if not self._next_is(":"):
                raise self.error("Expecting ':' delimiter")
            if self.peek() in ("{", "["):
                yield f"{'  ' * level}{key}:\n"
                yield from self.value(level + 1)
            else:
                yield f"{'  ' * level}{key}: {self._scalar()}\n"
            if self._next_is("}"):
                return
            if not self._next_is(","):
                raise self.error("Expecting ',' delimiter")

    def _items(self, level: int) -> Iterator[str]:
        self.pos += 1  # [
        if self._next_is("]"):
            return
        while True:
            yield from self.item(level)
            if self._next_is("]"):
                return
            if not self._next_is(","):
                raise self.error("Expecting ',' delimiter")

    def _whole(self) -> Any:
        """The object or array that starts here, if it is in the buffer whole and parses; else None."""
        if not self.eof and len(self.buf) - self.pos < BLOCK:
            self._fill()
        try:
            data, end = _DECODER.raw_decode(self.buf, self.pos)
        except (json.JSONDecodeError, RecursionError):
            return None  # cut by the buffer's end, or invalid: read it a piece at a time (locates the error)
        self.pos = end
        return data

    def _scalar(self) -> Any:
        """The string, number, true, false or null that starts here, whole in the buffer first."""
        if self.pos >= len(self.buf):
            raise self.error("Expecting value")
        first = self.buf[self.pos]
        if first == '"':
            self._until_string_end()
        elif first in "-0123456789":
            while not self.eof and not _NUMBER_END.search(self.buf, self.pos):
                self._fill()
        else:
            while not self.eof and len(self.buf) - self.pos < 5:
                self._fill()
        try:
            data, end = _DECODER.raw_decode(self.buf, self.pos)
        except json.JSONDecodeError as exc:
            raise self.error(exc.msg, exc.pos) from None
        self.pos = end
        return data

    def _until_string_end(self) -> None:
        """Fill the buffer until the string starting at ``pos`` ends in it (or the file does)."""
        searched = 1  # from pos: the buffer's start moves when it is filled
        while True:
            quote = self.buf.find('"', self.pos + searched)
            if quote < 0:
                if self.eof:
                    return
                searched = len(self.buf) - self.pos
                self._fill()
                continue
            before = quote - 1
            while self.buf[before] == "\\":
                before -= 1
            if (quote - 1 - before) % 2 == 0:  # an even run of backslashes escapes none of the quote
                return
            searched = quote + 1 - self.pos

    # -- the buffer -----------------------------------------------------------------------------
    def peek(self) -> str:
        """The next character that is not white space ("" at the end of the file), not consumed."""
        while True:
            space = _SPACE.match(self.buf, self.pos)
            self.pos = space.end() if space else self.pos
            if self.pos < len(self.buf) or self.eof:
                return self.buf[self.pos : self.pos + 1]
            self._fill()

    def _next_is(self, char: str) -> bool:
        """Consume ``char`` if it is the next character that is not white space."""
        if self.peek() == char:
            self.pos += 1
            return True
        return False

    def _fill(self) -> None:
        """Read on, first dropping what was read (keeping ``line`` and ``column`` right): at least
        as much as is unread, so a long string costs a few copies, not one per piece."""
        if self.pos:
            done = self.buf[: self.pos]
            newlines = done.count("\n")
            self.line += newlines
            self.column = len(done) - done.rfind("\n") if newlines else self.column + len(done)
            self.buf = self.buf[self.pos :]
            self.pos = 0
        parts, size = [self.buf], 0
        while size < max(len(self.buf), 1):
            piece = next(self.pieces, None)
            if piece is None:
                self.eof = True
                break
            parts.append(piece)
            size += len(piece)
        self.buf = "".join(parts)

    def error(self, message: str, at: int | None = None) -> Exception:
        at = self.pos if at is None else at
        newlines = self.buf.count("\n", 0, at)
        column = at - self.buf.rfind("\n", 0, at) if newlines else self.column + at
        return located(self.label, f"line {self.line + newlines}, column {column}", f"not valid JSON ({message})")
