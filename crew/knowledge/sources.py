"""The knowledge sources, named and shaped as CrewAI's, and what each one indexes.

A source is a declaration (a string, or files by path); nothing is read when it is made.
At indexing, each source gives its *units*: one for a string, one per file. A unit is what is
hashed and indexed (or skipped) as a whole, so a changed file re-indexes that file only. A
unit's chunks are read as a stream (see ``readers``) and carry their origin: the file as
given, and the page for a PDF.

Relative paths resolve in the project's ``knowledge/`` folder (CrewAI's convention) and may not
leave it; an absolute path is taken as it is.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from crew.errors import KnowledgeSourceError
from crew.knowledge import readers
from crew.knowledge.chunking import CHUNK_OVERLAP, CHUNK_SIZE, Chunk, check_sizes, windows
from crew.knowledge.json_reader import json_pieces

KNOWLEDGE_FOLDER = "knowledge"
"""Where relative paths resolve, inside the project folder (CrewAI's ``KNOWLEDGE_DIRECTORY``)."""


@dataclass(frozen=True)
class Unit:
    """What is hashed and indexed as one: a string, or one file of a source.

    ``key`` names the unit across runs (kind, file, chunk sizes); ``fingerprint()`` hashes
    its content; ``chunks()`` reads it.
    """

    key: str
    label: str
    path: Path | None
    fingerprint: Callable[[], str]
    chunks: Callable[[], Iterator[Chunk]]


class BaseKnowledgeSource(BaseModel):
    """What every source has: chunk sizes (CrewAI's defaults) and metadata added to each chunk."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    kind: ClassVar[str] = "base"
    __crew_knowledge_source__: ClassVar[bool] = True
    chunk_size: int = CHUNK_SIZE
    chunk_overlap: int = CHUNK_OVERLAP
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _sizes(self) -> BaseKnowledgeSource:
        if "chunk_overlap" not in self.model_fields_set and self.chunk_overlap >= self.chunk_size:
            self.chunk_overlap = self.chunk_size // 20  # small chunks, the default overlap: keep 5%
        check_sizes(self.chunk_size, self.chunk_overlap)
        return self

    def units(self, folder: Path) -> list[Unit]:
        """The units of this source, its relative paths resolved in ``folder`` (``knowledge/``)."""
        raise NotImplementedError

    def _sized(self, text: str) -> str:
        """A unit key that changes when the chunk sizes do (the chunks would differ)."""
        return f"{self.kind}:{self.chunk_size}:{self.chunk_overlap}:{text}"

    def _cut(self, pieces: Iterator[str], label: str, index: int = 0, page: int | None = None) -> Iterator[Chunk]:
        for offset, text in enumerate(windows(pieces, self.chunk_size, self.chunk_overlap)):
            yield Chunk(text=text, source=label, index=index + offset, page=page, metadata=self.metadata)


class StringKnowledgeSource(BaseKnowledgeSource):
    """Knowledge given as text in the code or the YAML: ``StringKnowledgeSource(content="...")``."""

    kind: ClassVar[str] = "string"
    content: str

    def units(self, folder: Path) -> list[Unit]:
        digest = hashlib.sha256(self.content.encode()).hexdigest()
        label = _string_label(self.content)
        if not self.content.strip():
            raise KnowledgeSourceError(f"knowledge source {label}: the string is empty", source=label)
        return [
            Unit(
                key=self._sized(f"sha256:{digest}"),
                label=label,
                path=None,
                fingerprint=lambda: digest,
                chunks=lambda: self._cut(iter([self.content]), label),
            )
        ]


class BaseFileKnowledgeSource(BaseKnowledgeSource):
    """Sources read from files: ``file_paths`` (one path or a list; ``file_path``, CrewAI's older
    name, is taken too)."""

    file_paths: Path | str | list[Path | str] = Field(default_factory=list)
    """One path or a list of them (CrewAI takes both); a list once validated (``paths``)."""
    file_path: Path | str | list[Path | str] | None = Field(default=None, exclude=True)

    @field_validator("file_paths", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        return [value] if isinstance(value, str | Path) else value

    @model_validator(mode="after")
    def _some_file(self) -> BaseFileKnowledgeSource:
        if self.file_path is not None:
            older = self.file_path if isinstance(self.file_path, list) else [self.file_path]
            self.file_paths = [*self.paths, *older]
            self.file_path = None
        if not self.paths:
            raise ValueError(f"{type(self).__name__} needs file_paths: one path or a list of them")
        return self

    @property
    def paths(self) -> list[Path | str]:
        """``file_paths`` as a list."""
        return self.file_paths if isinstance(self.file_paths, list) else [self.file_paths]

    def units(self, folder: Path) -> list[Unit]:
        return [self._unit(resolve_path(raw, folder), str(raw)) for raw in self.paths]

    def _unit(self, path: Path, label: str) -> Unit:
        return Unit(
            key=self._sized(str(path)),
            label=label,
            path=path,
            fingerprint=lambda: file_digest(path, label),
            chunks=lambda: _not_empty(self.read(path, label), label, self.kind),
        )

    def read(self, path: Path, label: str) -> Iterator[Chunk]:
        """The chunks of one file."""
        raise NotImplementedError


class TextFileKnowledgeSource(BaseFileKnowledgeSource):
    """Plain-text files (``.txt``, ``.md``, ...), read as UTF-8."""

    kind: ClassVar[str] = "text"

    def read(self, path: Path, label: str) -> Iterator[Chunk]:
        return self._cut(readers.text_pieces(path, label), label)


class CSVKnowledgeSource(BaseFileKnowledgeSource):
    """CSV files: each row becomes a line of its cells (CrewAI's form), read a row at a time."""

    kind: ClassVar[str] = "csv"

    def read(self, path: Path, label: str) -> Iterator[Chunk]:
        return self._cut(readers.csv_pieces(path, label), label)


class JSONKnowledgeSource(BaseFileKnowledgeSource):
    """JSON files, written out as indented ``key: value`` lines, read as they stream in (a large
    file never loads whole); a ``.jsonl``/``.ndjson`` file is JSON Lines, a list of documents."""

    kind: ClassVar[str] = "json"

    def read(self, path: Path, label: str) -> Iterator[Chunk]:
        return self._cut(json_pieces(path, label), label)


class PDFKnowledgeSource(BaseFileKnowledgeSource):
    """PDF files' text (pypdf, in the ``[memory]`` extra), chunked page by page.

    A chunk never spans two pages, so each one names the page it quotes exactly.
    """

    kind: ClassVar[str] = "pdf"

    def read(self, path: Path, label: str) -> Iterator[Chunk]:
        index = 0
        for page, text in readers.pdf_pages(path, label):
            for chunk in self._cut(iter([text]), label, index, page):
                index += 1
                yield chunk


def resolve_path(raw: Path | str, folder: Path) -> Path:
    """``raw`` in ``folder`` when relative (and refused if it leaves it), as it is when absolute."""
    path = Path(raw).expanduser()
    if path.is_absolute():
        return path
    root = folder.resolve()
    resolved = (root / path).resolve()
    if not resolved.is_relative_to(root):
        raise KnowledgeSourceError(
            f"knowledge source {raw}: the path leaves the knowledge folder {root} (relative paths resolve in it)",
            source=str(raw),
        )
    return resolved


def file_digest(path: Path, label: str) -> str:
    """The sha256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with readers.open_file(path, label) as stream:
        while block := stream.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _not_empty(chunks: Iterator[Chunk], label: str, kind: str) -> Iterator[Chunk]:
    """``chunks``, or an error at the end when there were none (an empty file indexes nothing)."""
    empty = True
    for chunk in chunks:
        empty = False
        yield chunk
    if empty:
        what = (
            "the PDF has no text (scanned pages? crew reads a PDF's text layer)"
            if kind == "pdf"
            else "the file is empty"
        )
        raise KnowledgeSourceError(f"knowledge source {label}: {what}", source=label)


def _string_label(content: str) -> str:
    words = " ".join(content.split())
    return f"string '{words[:40]}{'...' if len(words) > 40 else ''}'"
