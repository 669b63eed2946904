"""``knowledge:`` in crew.yaml (per crew or per agent): files and strings become knowledge sources.

Each item is a file name (its kind from its extension), or a mapping::

    knowledge:
      - meta_quest_manual.pdf            # PDF, read from knowledge/
      - file: staff.csv                  # or files: [a.md, b.md]; type: text|pdf|csv|json
        chunk_size: 1000
      - content: The office opens at 9.  # a string source

A CrewAI ``crew.py``'s ``knowledge_sources=[PDFKnowledgeSource(...)]`` is read into the same
form (``crew.config.crewai.compose``), so both are checked here, each mistake at its line.
A missing file, or a path leaving ``knowledge/``, is reported here, at its line; what is inside a
file (a PDF without text, bytes that are not UTF-8) is found when the crew indexes its sources,
before the run.
"""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import Any

from crew.common.keywords import did_you_mean
from crew.config.loader import YamlList, YamlMap
from crew.knowledge.sources import KNOWLEDGE_FOLDER

KINDS = {
    "text": "TextFileKnowledgeSource",
    "pdf": "PDFKnowledgeSource",
    "csv": "CSVKnowledgeSource",
    "json": "JSONKnowledgeSource",
}
_KEYS = ("file", "files", "content", "type", "chunk_size", "chunk_overlap", "metadata")


def knowledge_folder(folder: Path) -> Path:
    """Where a crew folder's relative knowledge paths resolve: its own ``knowledge/``, else that of
    the project holding it (up to the folder with ``pyproject.toml``: a CrewAI project keeps
    ``knowledge/`` at its root, beside ``src/``)."""
    folder = folder.resolve()
    root = next((p for p in (folder, *folder.parents) if (p / "pyproject.toml").is_file()), folder)
    for candidate in (folder, *folder.parents):
        if (candidate / KNOWLEDGE_FOLDER).is_dir():
            return candidate / KNOWLEDGE_FOLDER
        if candidate == root:
            break
    return folder / KNOWLEDGE_FOLDER


def kind_of(path: str) -> str:
    """``pdf``, ``csv`` or ``json`` (``.jsonl``, ``.ndjson`` too) by extension; anything else is read as text."""
    suffix = PurePath(path).suffix.lower().lstrip(".")
    suffix = "json" if suffix in ("jsonl", "ndjson") else suffix
    return suffix if suffix in KINDS else "text"


def knowledge_list(builder: Any, entry: Any, key: str, value: Any) -> tuple[bool, list[Any] | None]:
    """The sources a ``knowledge:`` value declares, or (False, None) after reporting what is wrong.

    ``builder`` and ``entry`` are ``crew.config.build``'s (not imported: build imports this module).
    """
    if value is None:
        return True, []
    if not isinstance(value, list):
        builder.error(entry, key, "expected a list of files (in knowledge/) or of {content: ...} strings")
        return False, None
    out: list[Any] = []
    ok = True
    for i, item in enumerate(value):
        line = value.line_of(i) if isinstance(value, YamlList) else entry.line_of(key)
        where = f"{entry.path}.{key}[{i}]" if entry.path else f"{key}[{i}]"
        problem, sources = _item(item)
        problem = problem or _missing(sources, knowledge_folder(builder.folder))
        if problem:
            builder.problems.add(entry.file_of(key), line, where, problem)
            ok = False
        out.extend(sources)
    return ok, out if ok else None


def _missing(sources: list[Any], folder: Path) -> str | None:
    """A file that is not there, or a path leaving ``knowledge/``: said at its line now, not at kickoff."""
    from crew.errors import KnowledgeSourceError

    for source in sources:
        try:
            for unit in source.units(folder):
                if unit.path is not None and not unit.path.is_file():
                    return f"knowledge source {unit.label}: no such file ({unit.path})"
        except KnowledgeSourceError as exc:
            return str(exc)
    return None


def _item(item: Any) -> tuple[str | None, list[Any]]:
    if isinstance(item, str):
        item = {"file": item}
    if not isinstance(item, dict):
        return f"expected a file name or a mapping (file:, files: or content:), got {type(item).__name__}", []
    unknown = [k for k in item if k not in _KEYS]
    if unknown:
        return f"unknown key '{unknown[0]}'{did_you_mean(unknown[0], _KEYS)}", []
    given = [k for k in ("file", "files", "content") if k in item]
    if len(given) != 1:
        return "give one of file:, files: or content:", []
    settings = {k: item[k] for k in ("chunk_size", "chunk_overlap", "metadata") if k in item}
    if "content" in item:
        return _build("StringKnowledgeSource", {"content": item["content"], **settings})
    files = item.get("files", [item.get("file")])
    if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
        return "file: takes a file name, files: a list of them", []
    kind = item.get("type")
    if kind is not None and kind not in KINDS:
        return f"unknown type '{kind}'{did_you_mean(kind, KINDS)} (one of {', '.join(KINDS)})", []
    out: list[Any] = []
    for path in files:
        problem, built = _build(KINDS[kind or kind_of(path)], {"file_paths": [path], **settings})
        if problem:
            return problem, []
        out.extend(built)
    return None, out


def _build(name: str, kwargs: dict[str, Any]) -> tuple[str | None, list[Any]]:
    from pydantic import ValidationError

    import crew.knowledge as knowledge

    plain = {k: dict(v) if isinstance(v, YamlMap) else v for k, v in kwargs.items()}
    try:
        return None, [getattr(knowledge, name)(**plain)]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        message = str(first["msg"]).removeprefix("Value error, ")
        return f"{where + ': ' if where else ''}{message}", []
