"""YAML loading that remembers where every key came from.

Error messages must point at ``file:line``, and plain ``yaml.safe_load`` forgets
positions. The loader below is ``SafeLoader`` (libyaml when present) with two
constructors replaced: mappings become ``YamlMap`` and sequences ``YamlList``,
both carrying the line of each key or item. It also catches what PyYAML silently
accepts: a key written twice in one mapping (the second would win unnoticed).

String values may reference the environment as ``${VAR}`` or ``${VAR:-default}``
(``$${`` keeps a literal ``${``), so a crew file can say ``llm: ${CREW_LLM:-test}``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml

from crew.common.secrets import looks_secret, register

_Base: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_ENV = re.compile(r"\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}")


class YamlMap(dict):
    """A mapping plus the 1-based line of itself and of each of its keys."""

    line: int = 0
    key_lines: dict[Any, int]
    duplicates: list[tuple[Any, int, int]]  # (key, line of the repeat, line of the first)
    key_files: dict[Any, str]  # set only on maps merging several files (a CrewAI crew.py over its YAML)

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)

    def file_of(self, key: Any, default: str) -> str:
        """The file a key was written in: ``default`` unless the map merges several files (a CrewAI crew.py)."""
        files: dict[Any, str] | None = self.__dict__.get("key_files")
        return files.get(key, default) if files else default


class YamlList(list):
    """A sequence plus the 1-based line of itself and of each item."""

    line: int = 0
    item_lines: list[int]

    def line_of(self, index: int) -> int:
        return self.item_lines[index] if 0 <= index < len(self.item_lines) else self.line


class YamlSyntaxError(Exception):
    """The text is not YAML; ``line`` says where the parser gave up, ``path`` in which key."""

    def __init__(self, message: str, line: int, path: list[Any] | None = None):
        super().__init__(message)
        self.line = line
        self.path = path or []


MAX_DEPTH = 64
"""Containers nested deeper than this are an error: no crew needs them, and deep trees
overflow the recursion of every later walk (validation, JSON, placeholders)."""

MAX_SIZE = 200_000
"""The most a file may expand to, in nodes (a string counts one per started kilobyte).
Aliases let a few hundred bytes stand for billions of nodes (``&a [x, x]``, ``&b [*a, *a]``
...); past this the file is refused rather than expanded."""


EnvProblem = tuple[int, list[Any], str]
"""An unset ``${VAR}``: its line, the keys leading to its value (filled in as the mappings and
lists around it are built: a flow mapping holds several keys on one line), and the message."""


class _LineLoader(_Base):  # type: ignore[misc, valid-type]
    env_problems: list[EnvProblem]
    depth: int = 0

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """Construct as usual, but bound the nesting and locate every value error.

        A tag that cannot build its value (``!!int "x"``) raises a plain ValueError in
        PyYAML, with no position; here it becomes a located ``ConstructorError``.
        """
        collection = isinstance(node, yaml.CollectionNode)
        if collection:
            if self.depth >= MAX_DEPTH:
                raise yaml.constructor.ConstructorError(
                    None, None, f"nested more than {MAX_DEPTH} levels deep", node.start_mark
                )
            self.depth += 1
        try:
            return super().construct_object(node, deep=deep)
        except yaml.MarkedYAMLError:
            raise
        except (ValueError, TypeError, OverflowError, ArithmeticError) as exc:
            tag = node.tag.rsplit(":", 1)[-1]
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read this value as {tag}: {exc}", node.start_mark
            ) from None
        finally:
            if collection:
                self.depth -= 1


def _mapping(loader: _LineLoader, node: yaml.MappingNode) -> YamlMap:
    explicit = {id(key) for key, _ in node.value}
    loader.flatten_mapping(node)  # `<<: *anchor` merges come first, explicit keys override them
    out = YamlMap()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    out.duplicates = []
    first_seen: dict[Any, int] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key must be a plain value", key_node.start_mark
            ) from None
        if id(key_node) in explicit:
            if key in first_seen:
                out.duplicates.append((key, line, first_seen[key]))
            else:
                first_seen[key] = line
        out[key] = _located(loader, key, value_node)
        out.key_lines[key] = line
    return out


def _located(loader: _LineLoader, key: Any, node: yaml.Node) -> Any:
    """Construct the value under ``key``; an unset ``${VAR}`` inside it gets ``key`` in its path."""
    before = len(loader.env_problems)
    value = loader.construct_object(node, deep=True)
    for _, path, _ in loader.env_problems[before:]:
        path.insert(0, key)
    return value


def _sequence(loader: _LineLoader, node: yaml.SequenceNode) -> YamlList:
    out = YamlList(_located(loader, i, child) for i, child in enumerate(node.value))
    out.line = node.start_mark.line + 1
    out.item_lines = [child.start_mark.line + 1 for child in node.value]
    return out


def _string(loader: _LineLoader, node: yaml.ScalarNode) -> str:
    text = loader.construct_scalar(node)
    if "${" not in text:
        return text

    def substitute(match: re.Match[str]) -> str:
        escaped, name, default = match.groups()
        if escaped:
            return match.group(0)[1:]
        value = os.environ.get(name)
        if value is None and default is None:
            loader.env_problems.append(
                (
                    node.start_mark.line + 1,
                    [],
                    f"environment variable {name} is not set (write ${{{name}:-default}} for a fallback)",
                )
            )
            return ""
        chosen = value if value is not None else default
        if looks_secret(name):
            register(chosen)  # scrubbed from every text that leaves the process from now on
        return chosen

    return _ENV.sub(substitute, text)


_LineLoader.add_constructor("tag:yaml.org,2002:map", _mapping)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _sequence)
_LineLoader.add_constructor("tag:yaml.org,2002:str", _string)


def load_yaml(path: Path) -> tuple[Any, list[EnvProblem]]:
    """Parse one file safely; return the tree and (line, message) environment problems.

    Raises ``YamlSyntaxError`` when the text is not valid YAML.
    """
    text = path.read_text(encoding="utf-8")
    loader = _LineLoader(text)
    loader.env_problems = []
    try:
        data = loader.get_single_data()
        check_size(data)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = exc.problem or "invalid YAML"
        if exc.context:
            message = f"{message} ({exc.context})"
        if "mapping values are not allowed" in message:  # the classic: `description: Note: be brief`
            message += "; a text holding ': ' must be quoted"
        elif mark is not None and _tab_at(text, mark.line, mark.column):
            message += "; YAML indents with spaces, not tabs"
        raise YamlSyntaxError(message, (mark.line + 1) if mark else 1, _open_keys(text)) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(str(exc).splitlines()[0], 1) from None
    except RecursionError:
        raise YamlSyntaxError(f"nested more than {MAX_DEPTH} levels deep", 1) from None
    finally:
        loader.dispose()
    return data, loader.env_problems


def _tab_at(text: str, line: int, column: int) -> bool:
    """Whether the parser stopped at a tab: in the indentation of ``line`` (0-based) or at ``column``.

    libyaml says only "found character that cannot start any token", which names no tab.
    """
    lines = text.splitlines()
    if not 0 <= line < len(lines):
        return False
    row = lines[line]
    indent = row[: len(row) - len(row.lstrip(" \t"))]
    return "\t" in indent or row[column : column + 1] == "\t"


class TooLarge(yaml.MarkedYAMLError):
    """A tree that expands past ``MAX_SIZE`` nodes (through aliases, usually)."""


def check_size(data: Any, limit: int = MAX_SIZE) -> None:
    """Raise ``TooLarge`` (at the line of the node that crosses ``limit``) when ``data`` expands past it.

    Shared nodes (aliases) are measured once and their size reused, so this costs the
    number of distinct nodes, not the expansion.
    """
    sizes: dict[int, int] = {}

    def refuse(node: Any, problem: str) -> TooLarge:
        line = getattr(node, "line", 0)
        return TooLarge(problem=problem, problem_mark=yaml.Mark("", 0, max(line - 1, 0), 0, None, 0))

    def size(node: Any, depth: int) -> int:
        if isinstance(node, str):
            return 1 + len(node) // 1024
        if not isinstance(node, (dict, list)):
            return 1
        known = sizes.get(id(node))
        if known is not None:
            return known
        if depth >= MAX_DEPTH:
            raise refuse(node, f"nested more than {MAX_DEPTH} levels deep")
        children = [*node.keys(), *node.values()] if isinstance(node, dict) else node
        total = 1
        for child in children:
            total += size(child, depth + 1)
            if total > limit:
                raise refuse(
                    node, f"expands to more than {limit:,} values (aliases repeating aliases?); refusing to expand it"
                )
        sizes[id(node)] = total
        return total

    size(data, 0)


def load_data(path: Path) -> Any:
    """A data file (``.json``, ``.yaml``, ``.yml``) read with the same limits as a crew file.

    Raises ``YamlSyntaxError`` (a line, and the problem) for text that is not valid,
    too deep or too large once expanded.
    """
    if path.suffix.lower() != ".json":
        data, _ = load_yaml(path)
        return data
    import json

    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except RecursionError:
        raise YamlSyntaxError(f"nested more than {MAX_DEPTH} levels deep", 1) from None
    except json.JSONDecodeError as exc:
        raise YamlSyntaxError(exc.msg, exc.lineno) from None
    try:
        check_size(data)
    except TooLarge as exc:
        raise YamlSyntaxError(exc.problem or "too large", 1) from None
    return data


def _open_keys(text: str) -> list[Any]:
    """The keys (and item indexes) the parser was inside when it gave up on ``text``.

    Replays the parser's events up to the error: each mapping remembers the key whose
    value is being read, each sequence the index of its item.
    """
    frames = _Frames()
    try:
        for event in yaml.parse(text, Loader=_Base):
            if isinstance(event, yaml.CollectionEndEvent):
                frames.close()
            elif isinstance(event, yaml.NodeEvent):
                frames.node(event)
    except (yaml.YAMLError, TypeError, ValueError):
        pass
    return frames.open_keys()


class _Frames:
    """The open collections of a replayed parse: ["map", key, reading_value] or ["seq", index] each."""

    def __init__(self) -> None:
        self.stack: list[list[Any]] = []

    def close(self) -> None:
        self.stack.pop()
        self._value_done()

    def node(self, event: yaml.NodeEvent) -> None:
        top = self.stack[-1] if self.stack else None
        if top is not None and top[0] == "map" and not top[2]:  # this node is a key
            top[1], top[2] = getattr(event, "value", "?"), True
            if isinstance(event, yaml.CollectionStartEvent):
                self.stack.append(["map" if isinstance(event, yaml.MappingStartEvent) else "seq", None, False])
            return
        if top is not None and top[0] == "seq" and isinstance(top[1], int):
            top[1] += 1
        if isinstance(event, yaml.MappingStartEvent):
            self.stack.append(["map", None, False])
        elif isinstance(event, yaml.SequenceStartEvent):
            self.stack.append(["seq", -1])
        else:
            self._value_done()

    def _value_done(self) -> None:
        if self.stack and self.stack[-1][0] == "map":
            self.stack[-1][2] = False

    def open_keys(self) -> list[Any]:
        return [f[1] for f in self.stack if (f[0] == "map" and f[2]) or (f[0] == "seq" and f[1] >= 0)]
