"""The keyword ranking's bound: the words common in the collection are left out, as stop words."""

from __future__ import annotations

from pathlib import Path

import pytest

from crew.search import Doc, SearchIndex, keywords
from crew.search.keywords import selective


def test_the_rarest_words_are_kept_while_their_documents_fit_the_budget():
    counts = {"rare": 3, "uncommon": 40, "common": 4980, "everywhere": 5001}
    assert selective(["rare", "uncommon", "common", "everywhere"], counts) == ["rare", "uncommon"]
    assert selective(["everywhere"], counts) == []
    many = [f"w{i}" for i in range(20)]
    assert selective(many, dict.fromkeys(many, 1)) == many[: keywords.MAX_RANKED]


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Ten reports, two of them invoices, with a budget of 4 documents (as 5,000 in 100k records)."""
    monkeypatch.setattr(keywords, "BUDGET", 4)
    with SearchIndex(tmp_path / "k.db", "memory", None) as ix:
        ix.add([Doc(f"r{i}", f"weekly report number {i}", "/crew/a") for i in range(8)])
        ix.add([Doc("inv1", "report with an invoice attached", "/crew/a"), Doc("inv2", "invoice report", "/crew/b")])
        yield ix


def test_a_word_in_more_documents_than_the_budget_does_not_rank(index: SearchIndex):
    # "report" is in all ten: BM25 would score every one; "invoice" alone ranks
    assert sorted(hit.doc.id for hit in index.search("report invoice", limit=5)) == ["inv1", "inv2"]
    assert [hit.doc.id for hit in index.search("invoice report", limit=5, scope="/crew/b")] == ["inv2"]


def test_a_query_of_common_words_only_finds_the_newest_holding_them(index: SearchIndex):
    assert [hit.doc.id for hit in index.search("weekly report", limit=3)] == ["r7", "r6", "r5"]
    # then the newest holding the query's first word (both are past the budget: which is rarer is not counted)
    assert [hit.doc.id for hit in index.search("report weekly", limit=10)][-3:] == ["r0", "inv2", "inv1"]
    assert [hit.doc.id for hit in index.search("report", limit=2, scope="/crew/a")] == ["inv1", "r7"]
