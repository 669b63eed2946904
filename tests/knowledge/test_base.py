"""KnowledgeBase: each unit indexed once, again only when it changes, whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crew.errors import KnowledgeSourceError
from crew.knowledge import PDFKnowledgeSource, StringKnowledgeSource, TextFileKnowledgeSource
from crew.knowledge.base import KnowledgeBase
from crew.testing.pdf import write_pdf

CREW = "/crew/demo/shared"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    knowledge = tmp_path / "knowledge"
    knowledge.mkdir()
    return knowledge


@pytest.fixture
def base(tmp_path: Path, folder: Path):
    with KnowledgeBase(tmp_path / ".crew" / "knowledge.db", folder=folder, embedder="none") as kb:
        yield kb


def test_a_source_is_indexed_once_and_found_with_its_page(base: KnowledgeBase, folder: Path):
    write_pdf(folder / "quest.pdf", ["Setup: charge the headset.", "The battery lasts about two hours of play."])
    sources = [PDFKnowledgeSource(file_paths="quest.pdf")]
    first = base.ingest(CREW, sources)
    assert (first.indexed, first.chunks) == (["quest.pdf"], 2)
    again = base.ingest(CREW, sources)
    assert (again.indexed, again.unchanged, again.chunks) == ([], ["quest.pdf"], 0)
    [best, *_] = base.search("how long does the battery last", [CREW])
    assert (best.source, best.page, best.label) == ("quest.pdf", 2, "quest.pdf, page 2")
    assert "two hours" in best.text


def test_a_touched_but_unchanged_file_is_hashed_not_reindexed(base: KnowledgeBase, folder: Path):
    note = folder / "note.txt"
    note.write_text("alpha beta", encoding="utf-8")
    base.ingest(CREW, [TextFileKnowledgeSource(file_paths="note.txt")])
    os.utime(note, ns=(1, 1))
    report = base.ingest(CREW, [TextFileKnowledgeSource(file_paths="note.txt")])
    assert report.unchanged == ["note.txt"] and report.chunks == 0


def test_a_changed_file_replaces_its_chunks(base: KnowledgeBase, folder: Path):
    note = folder / "note.txt"
    note.write_text("the old wording about walruses", encoding="utf-8")
    source = TextFileKnowledgeSource(file_paths="note.txt")
    base.ingest(CREW, [source])
    note.write_text("the new wording about narwhals", encoding="utf-8")
    assert base.ingest(CREW, [source]).indexed == ["note.txt"]
    assert [d.text for d in base.index.docs()] == ["the new wording about narwhals"]
    assert base.search("walruses", [CREW]) == []


def test_a_source_that_fails_half_way_leaves_nothing_of_itself(base: KnowledgeBase, folder: Path):
    note = folder / "long.txt"
    note.write_text("good words " * 100, encoding="utf-8")
    source = TextFileKnowledgeSource(file_paths="long.txt", chunk_size=50, chunk_overlap=0)
    base.ingest(CREW, [source])
    before = sorted(d.id for d in base.index.docs())
    note.write_bytes(b"fresh words " * 2000 + b"\xff")  # many chunks are indexed before the bad byte
    with pytest.raises(KnowledgeSourceError, match=r"long\.txt at line 1, byte 24000: not UTF-8"):
        base.ingest(CREW, [source])
    assert sorted(d.id for d in base.index.docs()) == before
    assert base.search("fresh", [CREW]) == []


def test_a_source_no_longer_listed_is_dropped(base: KnowledgeBase):
    base.ingest(CREW, [StringKnowledgeSource(content="Oslo is cold"), StringKnowledgeSource(content="Rome is warm")])
    report = base.ingest(CREW, [StringKnowledgeSource(content="Rome is warm")])
    assert report.removed == ["string 'Oslo is cold'"]
    assert [d.text for d in base.index.docs()] == ["Rome is warm"]


def test_scopes_keep_an_agents_knowledge_to_itself(base: KnowledgeBase):
    agent = "/crew/demo/agents/analyst"
    base.ingest(CREW, [StringKnowledgeSource(content="shared fact about zebras")])
    base.ingest(agent, [StringKnowledgeSource(content="private fact about zebras")])
    assert [p.text for p in base.search("zebras", [CREW])] == ["shared fact about zebras"]
    assert sorted(p.text for p in base.search("zebras", [CREW, agent])) == [
        "private fact about zebras",
        "shared fact about zebras",
    ]


def test_paths_are_checked_before_anything_is_written(base: KnowledgeBase, folder: Path):
    (folder / "ok.txt").write_text("fine", encoding="utf-8")
    sources = [TextFileKnowledgeSource(file_paths="ok.txt"), TextFileKnowledgeSource(file_paths="../../etc/passwd")]
    with pytest.raises(KnowledgeSourceError, match="leaves the knowledge folder"):
        base.ingest(CREW, sources)
    assert base.index.count() == 0


def test_another_embedder_re_embeds_the_knowledge_rather_than_refusing_it(tmp_path: Path, folder: Path):
    path = tmp_path / "k.db"
    with KnowledgeBase(path, folder=folder, embedder="none") as keywords:
        keywords.ingest(CREW, [StringKnowledgeSource(content="The lighthouse keeper rows to the island.")])
    with KnowledgeBase(path, folder=folder) as hybrid:  # the offline embedder now
        assert (
            hybrid.ingest(CREW, [StringKnowledgeSource(content="The lighthouse keeper rows to the island.")]).chunks
            == 0
        )
        assert hybrid.index.embedder is not None
        [found] = hybrid.search("who goes to the island by boat", [CREW])
        assert "lighthouse" in found.text
