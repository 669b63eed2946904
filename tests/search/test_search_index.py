"""The search core: keywords and vectors fused, scopes, writes kept current, embedders never mixed."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from crew.errors import EmbedderMismatchError, SearchIndexError
from crew.search import Doc, SearchIndex, normalize_scope, resolve_embedder

pytest.importorskip("wordllama", reason="the memory extra is not installed")

DOCS = [
    Doc("cat", "The cat sat on the mat all afternoon", "/crew/pets"),
    Doc("felines", "Felines enjoy resting on soft rugs", "/crew/pets/notes"),
    Doc("revenue", "Quarterly revenue grew twelve percent", "/crew/finance"),
    Doc("sibling", "A cat in a sibling scope", "/crew/petshop"),
]


@pytest.fixture(scope="module")
def embedder():
    return resolve_embedder(None)


@pytest.fixture
def index(tmp_path: Path, embedder):
    with SearchIndex(tmp_path / "search.db", "memory", embedder) as ix:
        ix.add(DOCS)
        yield ix


def ids(hits) -> list[str]:
    return [hit.doc.id for hit in hits]


def test_vectors_find_a_text_that_shares_no_word_with_the_query(index):
    hits = index.search("kitten sleeping on a carpet", limit=2, scope="/crew/pets")
    assert "felines" in ids(hits)
    assert all(hit.score > 0 for hit in hits)


def test_keywords_alone_find_only_texts_with_the_words(tmp_path: Path):
    with SearchIndex(tmp_path / "k.db", "memory", None) as ix:
        ix.add(DOCS)
        assert ids(ix.search("revenue percent")) == ["revenue"]
        assert ids(ix.search("kitten sleeping on a carpet")) == []
    # nothing half-written: the file has exactly the documents, with no vectors
    rows = sqlite3.connect(tmp_path / "k.db").execute("SELECT count(*), count(vector) FROM search_docs").fetchone()
    assert rows == (4, 0)


def test_a_query_of_fts_syntax_is_plain_text(index):
    assert ids(index.search('cat" OR NEAR( -revenue * "', limit=1, scope="/crew/pets")) == ["cat"]


def test_a_scope_sees_what_is_under_it_and_not_its_siblings(index):
    assert set(ids(index.search("cat", limit=10, scope="/crew/pets"))) == {"cat", "felines"}
    assert set(ids(index.search("cat", limit=10, scope="crew/pets/"))) == {"cat", "felines"}
    assert ids(index.search("cat", limit=10, scope="/crew/pets/notes")) == ["felines"]
    assert "sibling" in ids(index.search("cat", limit=10))
    assert [d.id for d in index.docs("/crew/pets")] == ["cat", "felines"]


def test_normalize_scope():
    assert normalize_scope(None) == normalize_scope("") == normalize_scope("//") == "/"
    assert normalize_scope("crew//a/") == "/crew/a"


def test_delete_and_replace_are_seen_by_the_next_search(index):
    assert index.search("cat", limit=10, scope="/crew/pets")
    index.delete(["cat", "no-such-id"])
    index.add([Doc("felines", "Quarterly felines report", "/crew/finance")])
    assert ids(index.search("cat mat afternoon", limit=10, scope="/crew/pets")) == []
    assert index.get("felines").scope == "/crew/finance"
    assert index.count() == 3
    assert index.clear("/crew/finance") == 2
    assert [d.id for d in index.docs()] == ["sibling"]


def test_another_connection_sees_writes_without_reopening(tmp_path: Path, embedder):
    path = tmp_path / "shared.db"
    with SearchIndex(path, "memory", embedder) as reader, SearchIndex(path, "memory", embedder) as writer:
        writer.add(DOCS[:1])
        assert ids(reader.search("cat on the mat")) == ["cat"]  # loads the vectors
        writer.add([Doc("dog", "A dog barked at the postman", "/")])
        writer.delete(["cat"])
        assert ids(reader.search("dog barking at the mail carrier")) == ["dog"]


def test_metadata_round_trips_and_secrets_are_scrubbed(tmp_path: Path):
    key = "sk-" + "A1b2C3d4" * 4
    with SearchIndex(tmp_path / "s.db", "memory", None) as ix:
        ix.add([Doc("k", f"the key is {key}", "/", {"token": key, "n": 3})])
        doc = ix.get("k")
    assert key not in doc.text and doc.metadata == {"token": "***", "n": 3}
    assert key.encode() not in (tmp_path / "s.db").read_bytes()


def test_another_embedder_is_refused_with_the_way_out_then_reembeds_on_request(tmp_path: Path, embedder):
    path = tmp_path / "e.db"
    with SearchIndex(path, "memory", None) as ix:
        ix.add(DOCS)
    with pytest.raises(EmbedderMismatchError, match=r"no embedder \(keywords only\), not 'wordllama.*reembed=True"):
        SearchIndex(path, "memory", embedder)
    with SearchIndex(path, "memory", embedder, reembed=True) as ix:
        assert "felines" in ids(ix.search("kitten sleeping on a carpet", limit=2))
    assert SearchIndex.recorded(path, "memory") == ("wordllama/l2_supercat", 256)
    with SearchIndex(path, "memory", None) as ix:  # keywords only may read a vector collection...
        assert ids(ix.search("revenue")) == ["revenue"]
        with pytest.raises(EmbedderMismatchError, match="indexed with 'wordllama/l2_supercat' \\(256 dimensions\\)"):
            ix.add([Doc("x", "text without a vector")])  # ...but not add to it
    with SearchIndex(path, "other", None) as ix:  # another collection of the file is its own
        ix.add([Doc("x", "keywords only here")])


def test_a_file_from_a_newer_crew_is_refused(tmp_path: Path):
    path = tmp_path / "new.db"
    SearchIndex(path, "memory", None).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE search_meta SET value = '99' WHERE key = 'version'")
    with pytest.raises(SearchIndexError, match="newer crew"):
        SearchIndex(path, "memory", None)


def _write_many(path: str, prefix: str) -> None:
    with SearchIndex(path, "memory", None) as ix:
        for i in range(100):
            ix.add([Doc(f"{prefix}{i}", f"note {i} from writer {prefix}")])


def test_two_processes_writing_one_file_lose_nothing(tmp_path: Path):
    path = str(tmp_path / "two.db")
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_write_many, args=(path, p)) for p in "ab"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    with SearchIndex(path, "memory", None) as ix:
        assert ix.count() == 200
        assert len(ix.search("writer", limit=500)) == 200
