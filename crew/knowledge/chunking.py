"""Cutting a text into overlapping chunks as it is read, never holding more than one chunk.

CrewAI cuts a source's whole text into windows of ``chunk_size`` characters, each starting
``chunk_size - chunk_overlap`` after the previous one. Here the same windows come out of a
stream of pieces (a file read 64 KB at a time, a PDF page by page), so a 1 GB text is cut with
a buffer of about one chunk. One difference: CrewAI also emits a last window that lies wholly
inside the one before it (a 4,000-character text gives two chunks); here it is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

CHUNK_SIZE = 4000
"""CrewAI's default chunk length, in characters (``BaseKnowledgeSource.chunk_size``)."""

CHUNK_OVERLAP = 200
"""CrewAI's default overlap between neighbouring chunks, in characters."""


@dataclass(frozen=True)
class Chunk:
    """One piece of a source, with where it came from: ``source`` (the file as given, or
    ``string #n``), ``page`` (1-based, PDFs only) and its position ``index`` in the source."""

    text: str
    source: str
    index: int
    page: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``guide.pdf, page 3``: how a prompt names the chunk's origin."""
        return self.source if self.page is None else f"{self.source}, page {self.page}"


def check_sizes(chunk_size: int, chunk_overlap: int) -> None:
    """Refuse sizes that cannot make progress (a zero step would never end)."""
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, not {chunk_size}")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValueError(f"chunk_overlap must be at least 0 and below chunk_size ({chunk_size}), not {chunk_overlap}")


def windows(pieces: Iterable[str], chunk_size: int, chunk_overlap: int) -> Iterator[str]:
    """The chunks of the text ``pieces`` make when joined, as they become complete."""
    step = chunk_size - chunk_overlap
    buffer = ""
    covered = 0  # leading characters of the buffer that an emitted chunk already holds
    for piece in pieces:
        buffer += piece
        while len(buffer) >= chunk_size:
            yield buffer[:chunk_size]
            buffer = buffer[step:]
            covered = chunk_overlap
    if len(buffer) > covered:
        yield buffer
