"""`crew memory DIR list | search | forget | reset`, in process, on a memory file a crew would use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crew.cli import main
from crew.memory import Memory

pytest.importorskip("wordllama", reason="the memory extra is not installed")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    with Memory(tmp_path / ".crew" / "memory.db") as memory:
        memory.remember("Ana likes teal posters", scope="/crew/studio/Designer", metadata={"task": "poster"})
        memory.remember("Invoices are due on the 5th", scope="/crew/office/Clerk")
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["memory", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_search_forget_and_reset(folder: Path, capsys, monkeypatch):
    monkeypatch.delenv("CREW_STORE", raising=False)  # the file beside the folder's own store
    code, out, _ = run(capsys, str(folder), "--json", "list")
    records = json.loads(out)
    assert code == 0 and [r["scope"] for r in records] == ["/crew/studio/Designer", "/crew/office/Clerk"]
    code, out, _ = run(capsys, str(folder), "search", "which colour for the poster?", "--json")
    (best, *_rest) = json.loads(out)
    assert code == 0 and best["content"] == "Ana likes teal posters" and best["score"] > 0
    code, out, _ = run(capsys, str(folder), "search", "poster", "--scope", "/crew/office")
    assert code == 0 and "teal" not in out
    code, _, err = run(capsys, str(folder), "forget", records[1]["id"])
    assert code == 0 and f"forgot {records[1]['id']}" in err
    code, _, err = run(capsys, str(folder), "forget", "no-such-id")
    assert (
        code == 1
        and err
        == f"crew: no record 'no-such-id' in {folder / '.crew' / 'memory.db'} (`crew memory DIR list` shows the ids)\n"
    )
    code, out, _ = run(capsys, str(folder), "reset", "--scope", "/crew/studio", "--json")
    assert code == 0 and json.loads(out) == {"removed": 1, "scope": "/crew/studio"}


def test_a_folder_without_memory_is_one_message_and_exit_2(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.delenv("CREW_STORE", raising=False)
    code, out, err = run(capsys, str(tmp_path), "list")
    assert code == 2 and out == ""
    path = tmp_path / ".crew" / "memory.db"
    assert err == f"crew: no memory file at {path}: a crew with `memory: true` writes it when it runs\n"
