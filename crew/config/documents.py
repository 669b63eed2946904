"""A crew folder's YAML documents: each file read with its problems, and its sections as named entries.

A section (``tools``, ``mcp_servers``, ``agents``, ``tasks``) may be written in crew.yaml or be a
whole file (agents.yaml, tasks.yaml); either way its entries come out the same, each with the
file and line it was written at, for ``crew.config.project`` to build the crew from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crew.config.build import Builder
from crew.config.entries import Entry, key_path, plain
from crew.config.loader import YamlList, YamlMap, YamlSyntaxError, load_yaml
from crew.config.problems import Problems, display_path


def _read(path: Path, problems: Problems) -> Any:
    """Parse one file, reporting syntax errors, duplicate keys and unset ${VARS}."""
    display = display_path(path)
    try:
        tree, env_problems = load_yaml(path)
    except YamlSyntaxError as exc:
        problems.add(display, exc.line, key_path(_root_path(path), *exc.path), f"invalid YAML: {exc}")
        return None
    except (OSError, UnicodeDecodeError) as exc:
        problems.add(display, 1, "", f"cannot read the file: {exc}")
        return None
    root = _root_path(path)
    for line, keys, message in env_problems:
        problems.add(display, line, key_path(root, *keys), message)
    for where, key, line, first in _duplicates(tree, root):
        problems.add(
            display,
            line,
            key_path(where, key),
            f"duplicate key '{key}' (first written on line {first}; the later value would win silently)",
        )
    return tree


def _root_path(path: Path) -> str:
    stem = path.stem
    return stem if stem in ("agents", "tasks") else ""


def _duplicates(node: Any, path: str, seen: set[int] | None = None) -> list[tuple[str, Any, int, int]]:
    """Every repeated key, each node visited once (an alias shares its node: no exponential walk)."""
    seen = set() if seen is None else seen
    if not isinstance(node, (YamlMap, YamlList)) or id(node) in seen:
        return []
    seen.add(id(node))
    out: list[tuple[str, Any, int, int]] = []
    if isinstance(node, YamlMap):
        out += [(path, key, line, first) for key, line, first in node.duplicates]
        for key, value in node.items():
            out += _duplicates(value, key_path(path, key), seen)
    else:
        for i, value in enumerate(node):
            out += _duplicates(value, key_path(path, i), seen)
    return out


@dataclass
class _Sections:
    """The named entries of every section, wherever each was written (crew.yaml, agents.yaml, crew.py)."""

    tools: list[Entry]
    servers: list[Entry]
    agents: list[Entry]
    tasks: list[Entry]


def _sections(
    builder: Builder, settings: Entry, files: dict[str, Path], trees: dict[str, Any], composed: Any
) -> _Sections:
    """crew.yaml's sections, then agents.yaml and tasks.yaml (or, for a CrewAI crew, what crew.py chose of them)."""
    tools, servers = _named(builder, settings, "tools"), _named(builder, settings, "mcp_servers")
    agents = _named(builder, settings, "agents")
    agents += composed.agents if composed is not None else _document(builder, files, trees, "agents")
    tasks = _named(builder, settings, "tasks")
    tasks += composed.tasks if composed is not None else _document(builder, files, trees, "tasks")
    return _Sections(tools, servers, agents, tasks)


def _overlay(tree: Any, extra: YamlMap) -> Any:
    """crew.yaml's settings with crew.py's crew arguments added (crew.yaml wins where both say)."""
    if not extra:
        return tree
    if tree is not None and not isinstance(tree, YamlMap):
        return tree  # not a mapping: the builder reports it
    out = _empty()
    out.key_files = dict(extra.key_files)
    for key, value in extra.items():
        out[key], out.key_lines[key] = value, extra.line_of(key)
    if tree is not None:
        out.line, out.duplicates = tree.line, tree.duplicates
        for key, value in tree.items():
            out[key], out.key_lines[key] = value, tree.line_of(key)
            out.key_files.pop(key, None)
    return out


def _empty() -> YamlMap:
    out = YamlMap()
    out.line, out.key_lines, out.duplicates = 1, {}, []
    return out


def _named(builder: Builder, settings: Entry, section: str) -> list[Entry]:
    """The entries of a ``name: {...}`` section of crew.yaml."""
    node = settings.data.get(section)
    if section not in settings.data or node is None:
        return []
    if not isinstance(node, YamlMap):
        builder.error(settings, section, f"expected a mapping of {section[:-1]} names to {section[:-1]}s")
        return []
    return _entries(builder, node, settings.file, section)


def _document(builder: Builder, files: dict[str, Path], trees: dict[str, Any], role: str) -> list[Entry]:
    """The entries of agents.yaml or tasks.yaml (the whole file is the section)."""
    tree = trees.get(role)
    if role not in files or tree is None:
        return []
    display = display_path(files[role])
    if not isinstance(tree, YamlMap):
        builder.problems.add(display, 1, role, f"expected a mapping of {role[:-1]} names to {role[:-1]}s")
        return []
    return _entries(builder, tree, display, role)


def _entries(builder: Builder, node: YamlMap, file: str, section: str) -> list[Entry]:
    out = []
    for name, data in node.items():
        line = node.line_of(name)
        if not isinstance(name, str) or not name.strip():
            builder.problems.add(
                file, line, key_path(section, name), f"a {section[:-1]} name must be a non-empty string"
            )
            continue
        out.append(Entry(name, data, file, line, key_path(section, name)))
    return out


def _unique(problems: Problems, entries: list[Entry], what: str) -> None:
    seen: dict[str, Entry] = {}
    for entry in entries:
        first = seen.setdefault(entry.name, entry)
        if first is not entry and first.file != entry.file:
            problems.add(
                entry.file,
                entry.line,
                entry.path,
                f"{what} '{entry.name}' is also declared in {first.file}:{first.line}",
            )


def _inputs(builder: Builder, settings: Entry) -> dict[str, Any]:
    node = settings.data.get("inputs")
    if node is None:
        return {}
    if not isinstance(node, YamlMap):
        builder.error(settings, "inputs", "expected a mapping of input names to default values")
        return {}
    return {str(k): plain(v) for k, v in node.items()}
