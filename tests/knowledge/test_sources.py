"""Knowledge sources: CrewAI's names and chunk sizes, streamed reading, located errors."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from crew.errors import ConfigError, KnowledgeSourceError
from crew.knowledge import (
    CSVKnowledgeSource,
    JSONKnowledgeSource,
    PDFKnowledgeSource,
    StringKnowledgeSource,
    TextFileKnowledgeSource,
)
from crew.knowledge.chunking import windows
from crew.testing.pdf import write_pdf


def crewai_chunks(text: str, size: int, overlap: int) -> list[str]:
    """CrewAI 1.15's BaseKnowledgeSource._chunk_text, as it is."""
    return [text[i : i + size] for i in range(0, len(text), size - overlap)]


def chunks_of(source, folder: Path) -> list:
    return [chunk for unit in source.units(folder) for chunk in unit.chunks()]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    knowledge = tmp_path / "knowledge"
    knowledge.mkdir()
    return knowledge


def test_defaults_are_crewais():
    source = StringKnowledgeSource(content="x")
    assert (source.chunk_size, source.chunk_overlap) == (4000, 200)


@pytest.mark.parametrize(
    ("length", "size", "overlap"),
    [(0, 10, 3), (9, 10, 3), (10, 10, 3), (11, 10, 3), (57, 10, 3), (57, 10, 0), (9000, 4000, 200)],
)
def test_windows_are_crewais_without_a_tail_inside_the_last_chunk(length, size, overlap):
    text = "".join(chr(97 + (i * 7) % 26) for i in range(length))
    pieces = [text[i : i + 6] for i in range(0, len(text), 6)]
    expected = crewai_chunks(text, size, overlap)
    step = size - overlap
    if len(expected) > 1 and (len(expected) - 1) * step + len(expected[-1]) <= (len(expected) - 2) * step + size:
        expected = expected[:-1]  # CrewAI's last window lies wholly inside the one before
    assert list(windows(pieces, size, overlap)) == expected


def test_chunks_come_out_as_the_text_streams_in():
    endless = itertools.repeat("0123456789")  # never ends: only a streaming chunker returns
    first = list(itertools.islice(windows(endless, 25, 5), 3))
    assert first == ["0123456789012345678901234", "0123456789012345678901234", "0123456789012345678901234"]


def test_a_large_text_file_is_read_in_blocks(folder: Path, monkeypatch):
    from crew.knowledge import readers

    monkeypatch.setattr(readers, "BLOCK", 1000)
    (folder / "big.txt").write_text("word " * 20_000)  # 100 KB
    pieces = readers.text_pieces(folder / "big.txt", "big.txt")
    assert max(len(piece) for piece in pieces) <= 1000


def test_sizes_that_cannot_progress_are_refused():
    with pytest.raises(ValueError, match="chunk_overlap"):
        StringKnowledgeSource(content="x", chunk_size=100, chunk_overlap=100)


def test_each_chunk_keeps_its_file_and_page(folder: Path):
    write_pdf(folder / "guide.pdf", ["Battery lasts two hours.", "", "Controllers pair by holding the Meta button."])
    (folder / "notes.txt").write_text("a" * 30, encoding="utf-8")
    pdf = chunks_of(PDFKnowledgeSource(file_paths=["guide.pdf"]), folder)
    assert [(c.source, c.page, c.label) for c in pdf] == [
        ("guide.pdf", 1, "guide.pdf, page 1"),
        ("guide.pdf", 3, "guide.pdf, page 3"),
    ]
    assert "Meta button" in pdf[1].text
    text = chunks_of(TextFileKnowledgeSource(file_paths="notes.txt", chunk_size=20, chunk_overlap=5), folder)
    assert [(c.source, c.page, c.index, len(c.text)) for c in text] == [
        ("notes.txt", None, 0, 20),
        ("notes.txt", None, 1, 15),
    ]


def test_csv_and_json_read_as_crewai_writes_them(folder: Path):
    (folder / "staff.csv").write_text("name,role\nAda,engineer\n", encoding="utf-8")
    (folder / "facts.json").write_text(json.dumps({"city": "Oslo", "tags": ["cold", {"sea": True}]}), encoding="utf-8")
    assert chunks_of(CSVKnowledgeSource(file_paths="staff.csv"), folder)[0].text == "name role\nAda engineer\n"
    assert chunks_of(JSONKnowledgeSource(file_paths="facts.json"), folder)[0].text == (
        "city: Oslo\ntags:\n  - cold\n  -\n    sea: True\n"
    )


def test_file_path_crewais_older_name_is_taken(folder: Path):
    (folder / "a.txt").write_text("alpha", encoding="utf-8")
    assert chunks_of(TextFileKnowledgeSource(file_path="a.txt"), folder)[0].text == "alpha"


def test_a_file_source_needs_a_path():
    with pytest.raises(ValueError, match="needs file_paths"):
        TextFileKnowledgeSource()


def test_an_absolute_path_is_taken_as_it_is(folder: Path, tmp_path: Path):
    (tmp_path / "elsewhere.txt").write_text("beta", encoding="utf-8")
    source = TextFileKnowledgeSource(file_paths=[tmp_path / "elsewhere.txt"])
    assert chunks_of(source, folder)[0].text == "beta"


def _error(source, folder: Path) -> KnowledgeSourceError:
    with pytest.raises(KnowledgeSourceError) as caught:
        chunks_of(source, folder)
    assert isinstance(caught.value, ConfigError)
    return caught.value


def test_a_relative_path_may_not_leave_the_knowledge_folder(folder: Path):
    (folder.parent / "secret.txt").write_text("s", encoding="utf-8")
    error = _error(TextFileKnowledgeSource(file_paths="../secret.txt"), folder)
    assert "leaves the knowledge folder" in str(error) and error.source == "../secret.txt"


def test_a_missing_file_is_named(folder: Path):
    error = _error(PDFKnowledgeSource(file_paths="nowhere.pdf"), folder)
    assert str(error).startswith("knowledge source nowhere.pdf: no such file")


def test_text_that_is_not_utf8_is_located(folder: Path):
    (folder / "latin.txt").write_bytes("line one\ncaf\xe9 two\n".encode("latin-1"))
    error = _error(TextFileKnowledgeSource(file_paths="latin.txt"), folder)
    assert error.where == "line 2, byte 12" and "not UTF-8" in str(error)


def test_csv_that_does_not_parse_is_located(folder: Path):
    (folder / "bad.csv").write_text('a,b\nc,"unclosed\n', encoding="utf-8")
    error = _error(CSVKnowledgeSource(file_paths="bad.csv"), folder)
    assert error.source == "bad.csv" and error.where.startswith("line ") and "not valid CSV" in str(error)


def test_json_that_does_not_parse_is_located(folder: Path):
    (folder / "bad.json").write_text('{\n  "a": [1, 2\n}', encoding="utf-8")
    error = _error(JSONKnowledgeSource(file_paths="bad.json"), folder)
    assert error.where == "line 3, column 1" and "not valid JSON" in str(error)


def test_empty_sources_are_refused(folder: Path):
    (folder / "empty.txt").write_text("", encoding="utf-8")
    assert "the file is empty" in str(_error(TextFileKnowledgeSource(file_paths="empty.txt"), folder))
    assert "the string is empty" in str(_error(StringKnowledgeSource(content="  "), folder))


def test_a_pdf_without_text_an_encrypted_one_and_a_broken_one_are_refused(folder: Path):
    import pypdf

    write_pdf(folder / "blank.pdf", ["", ""])
    assert "the PDF has no text" in str(_error(PDFKnowledgeSource(file_paths="blank.pdf"), folder))
    write_pdf(folder / "plain.pdf", ["open text"])
    writer = pypdf.PdfWriter(clone_from=folder / "plain.pdf")
    writer.encrypt("secret-password")
    writer.write(folder / "locked.pdf")
    assert "the PDF is encrypted" in str(_error(PDFKnowledgeSource(file_paths="locked.pdf"), folder))
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not a PDF body")
    assert "not a readable PDF" in str(_error(PDFKnowledgeSource(file_paths="broken.pdf"), folder))


def test_reading_a_large_file_holds_about_one_chunk_in_memory(folder: Path):
    import tracemalloc

    (folder / "big.txt").write_text("All work and no play. " * 250_000, encoding="utf-8")  # 5.5 MB
    source = TextFileKnowledgeSource(file_paths="big.txt")
    [unit] = source.units(folder)
    tracemalloc.start()
    try:
        count = sum(1 for _ in unit.chunks())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 1448 and peak < 1_000_000  # the file is 5.5 MB; one block and one chunk are < 0.2 MB
