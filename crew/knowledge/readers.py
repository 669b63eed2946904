"""Reading each kind of file as a stream of text pieces, with located errors.

A text or CSV file is read 64 KB (or a row) at a time, a PDF a page at a time, so a large
source never sits whole in memory (JSON too, in ``crew.knowledge.json_reader``). Whatever goes
wrong becomes a ``KnowledgeSourceError`` naming the file and where in it: the line and byte of
a byte that is not UTF-8, the line of a CSV row that does not parse, the line and column of bad
JSON, the page of a PDF that cannot be read.
"""

from __future__ import annotations

import codecs
import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from crew.errors import ConfigError, KnowledgeSourceError

BLOCK = 64 * 1024
"""Bytes read at a time from a text file."""

NEWLINE = b"\n"

PDF_INSTALL = 'pip install "crew-agents[memory]"'


def text_pieces(path: Path, label: str) -> Iterator[str]:
    """The UTF-8 text of ``path`` in pieces; a byte that is not UTF-8 is an error at its line."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")("strict")
    offset = 0
    lines = 1
    with open_file(path, label) as stream:
        while True:
            block = stream.read(BLOCK)
            try:
                text = decoder.decode(block, final=not block)
            except UnicodeDecodeError as exc:
                data = exc.object  # the bytes held back from the last block, then this one
                at = offset - (len(data) - len(block)) + exc.start
                where = f"line {lines + data[: exc.start].count(NEWLINE)}, byte {at}"
                raise located(label, where, "not UTF-8 text (save it as UTF-8)") from None
            if text:
                yield text
            if not block:
                return
            offset += len(block)
            lines += block.count(b"\n")


def csv_pieces(path: Path, label: str) -> Iterator[str]:
    """Each row of the CSV file ``path`` as one line of its cells joined by spaces (CrewAI's form)."""
    with open_file(path, label) as stream, _text(stream) as text:
        reader = csv.reader(text, strict=True)
        try:
            for row in reader:
                if row:
                    yield " ".join(row) + "\n"
        except csv.Error as exc:
            raise located(label, f"line {reader.line_num}", f"not valid CSV ({exc})") from None
        except UnicodeDecodeError:
            raise located(label, f"line {reader.line_num + 1}", "not UTF-8 text (save it as UTF-8)") from None


def pdf_pages(path: Path, label: str) -> Iterator[tuple[int, str]]:
    """``(page number, text)`` for each page of ``path`` that has text, one page read at a time."""
    open_file(path, label).close()
    reader = _pdf_reader(_pypdf(label), path, label)
    for number, page in enumerate(reader.pages, start=1):
        try:
            text = page.extract_text() or ""
        except Exception as exc:  # noqa: BLE001 (pypdf raises many kinds on a damaged page)
            raise located(label, f"page {number}", f"cannot read this page of the PDF ({exc})") from None
        if text.strip():
            yield number, text


def _pdf_reader(pypdf: Any, path: Path, label: str) -> Any:
    try:
        reader = pypdf.PdfReader(str(path))
        if reader.is_encrypted and not reader.decrypt(""):
            raise located(label, "", "the PDF is encrypted (save a copy without a password)")
        if len(reader.pages) == 0:
            raise located(label, "", "the PDF has no pages")
    except KnowledgeSourceError:
        raise
    except Exception as exc:  # noqa: BLE001 (PdfReadError, and what a truncated file raises)
        raise located(label, "", f"not a readable PDF ({type(exc).__name__}: {exc})") from None
    return reader


def _pypdf(label: str) -> Any:
    try:
        import pypdf
    except ImportError:
        raise ConfigError(
            f"knowledge source {label}: reading PDFs needs pypdf, which is not installed: {PDF_INSTALL}"
        ) from None
    return pypdf


def open_file(path: Path, label: str) -> Any:
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise located(label, "", f"no such file ({path})") from None
    except IsADirectoryError:
        raise located(label, "", f"a folder, not a file ({path})") from None
    except OSError as exc:
        raise located(label, "", f"cannot be opened ({exc.strerror or exc})") from None


def _text(stream: Any) -> Any:
    import io

    return io.TextIOWrapper(stream, encoding="utf-8-sig", newline="")


def located(label: str, where: str, what: str) -> KnowledgeSourceError:
    at = f" at {where}" if where else ""
    return KnowledgeSourceError(f"knowledge source {label}{at}: {what}", source=label, where=where)
