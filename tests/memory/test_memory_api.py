"""Memory on its own: remember, recall best first, scopes, forget, reset, secrets, embedders."""

from __future__ import annotations

from pathlib import Path

import pytest

from crew.errors import EmbedderMismatchError
from crew.memory import Memory, MemoryMatch, MemoryRecord

pytest.importorskip("wordllama", reason="the memory extra is not installed")


@pytest.fixture
def memory(tmp_path: Path):
    with Memory(tmp_path / "memory.db") as mem:
        mem.remember("The client prefers reports in French", scope="/crew/sales/writer", metadata={"run": 1})
        mem.remember("Deploys happen on Tuesdays after the standup", scope="/crew/ops/planner")
        mem.remember("Paris office closes in August", scope="/crew/sales/researcher")
        yield mem


def test_recall_returns_records_and_scores_best_first(memory):
    matches = memory.recall("which language should the report be written in?", limit=2)
    assert isinstance(matches[0], MemoryMatch)
    record, score = matches[0]
    assert record.content == "The client prefers reports in French" and record.metadata == {"run": 1}
    assert record.scope == "/crew/sales/writer" and record.created_at > 0
    assert score >= matches[1].score > 0


def test_a_recall_in_a_scope_sees_what_is_under_it(memory):
    sales = memory.recall("office report deploy", limit=10, scope="/crew/sales")
    assert {m.record.scope for m in sales} == {"/crew/sales/writer", "/crew/sales/researcher"}
    assert [r.scope for r in memory.list_records("/crew/ops")] == ["/crew/ops/planner"]
    assert len(memory.list_records()) == 3


def test_forget_and_reset(memory):
    first = memory.list_records()[0]
    assert memory.forget(first.id) is True and memory.forget(first.id) is False
    assert memory.get(first.id) is None
    assert memory.reset(scope="/crew/sales") == 1
    assert [r.scope for r in memory.list_records()] == ["/crew/ops/planner"]
    assert memory.reset() == 1 and memory.list_records() == []


def test_secrets_are_scrubbed_before_anything_is_stored(tmp_path: Path):
    key = "sk-proj-" + "Zx9" * 8
    with Memory(tmp_path / "m.db", embedder="none") as mem:
        record = mem.remember(f"use key {key} for the API", metadata={"note": f"key={key}"})
        assert isinstance(record, MemoryRecord) and key not in record.content and key not in str(record.metadata)
        assert mem.recall("API key")[0].record.content == "use key *** for the API"
    assert key.encode() not in (tmp_path / "m.db").read_bytes()


def test_a_memory_file_of_another_embedder_is_refused_then_reembedded_on_request(tmp_path: Path):
    path = tmp_path / "m.db"
    with Memory(path, embedder="none") as mem:
        mem.remember("The cat sat on the mat")
    with pytest.raises(EmbedderMismatchError, match=r"Memory\(\.\.\., reembed=True\)"):
        Memory(path)
    with Memory(path, reembed=True) as mem:
        assert mem.recall("kitten on a rug")[0].record.content == "The cat sat on the mat"


def test_remember_needs_a_text(tmp_path: Path):
    with Memory(tmp_path / "m.db", embedder="none") as mem, pytest.raises(ValueError, match="non-empty text"):
        mem.remember("  ")


def test_a_memory_pickles_as_its_file_and_embedder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import pickle

    monkeypatch.chdir(tmp_path)
    with Memory("notes.db", embedder="none") as mem:
        mem.remember("The standup is at ten")
        copy = pickle.loads(pickle.dumps(mem))  # as a crew sent to a Ray worker carries it
    monkeypatch.chdir("/")  # another working folder: the copy names the file absolutely
    with copy:
        assert copy.path == tmp_path / "notes.db" and copy.embedder is None
        assert [m.record.content for m in copy.recall("standup")] == ["The standup is at ten"]
