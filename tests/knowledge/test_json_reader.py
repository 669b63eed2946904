"""JSON knowledge read as it streams in: the same lines as a whole parse, errors where json puts them."""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from crew.config.knowledge import kind_of
from crew.errors import KnowledgeSourceError
from crew.knowledge import JSONKnowledgeSource, json_reader, readers
from crew.knowledge.json_reader import json_lines, json_pieces


@pytest.fixture
def tiny_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of 7 bytes: every token, escape and number is cut by a piece's end somewhere."""
    monkeypatch.setattr(readers, "BLOCK", 7)
    monkeypatch.setattr(json_reader, "BLOCK", 7)


PARTS = ["a", " ", '"', "\\", "é", "\n", "\\\\", "🦀", "x" * 30]
"""What strings are made of: quotes and backslashes to escape, text beyond ASCII."""


def _value(rng: random.Random, depth: int) -> Any:
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return rng.choice([True, False, None])
    if kind == 1:
        return rng.choice([0, -7, 123456789, 3.25, -1.5e-10, 2e20])
    if kind in (2, 3, 4):
        return "".join(rng.choice(PARTS) for _ in range(rng.randrange(6)))
    if kind in (5, 6):
        return [_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    return {f'k{i}\\"': _value(rng, depth + 1) for i in range(rng.randrange(5))}


@pytest.mark.parametrize("seed", range(40))
def test_streamed_lines_are_those_of_a_whole_parse(tmp_path: Path, tiny_pieces: None, seed: int):
    rng = random.Random(seed)
    data = _value(rng, 0) if seed % 4 else [_value(rng, 1) for _ in range(30)]
    path = tmp_path / "data.json"
    path.write_text(json.dumps(data, indent=rng.choice([None, 2]), ensure_ascii=seed % 2 == 0), encoding="utf-8")
    assert "".join(json_pieces(path, "data.json")) == "".join(json_lines(data, 0))


INVALID = [
    '{\n  "a": [1, 2\n}',
    "[1, 2,]",
    '{"a": 1,}',
    '{"a" 1}',
    '{"a": tru}',
    "[1, 2] [3]",
    '["unterminated',
    '[\n  {"a": 1},\n  {"b": nul}\n]',
    '{"x": [1, 2, 3',
    "",
    "   \n  ",
    "{1: 2}",
    "[01]",
    '["bad \\q escape"]',
]


@pytest.mark.parametrize("text", INVALID)
def test_invalid_json_is_located_where_the_standard_library_locates_it(tmp_path: Path, tiny_pieces, text: str):
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(KnowledgeSourceError) as caught:
        list(json_pieces(path, "bad.json"))
    assert caught.value.where == f"line {expected.value.lineno}, column {expected.value.colno}"
    assert str(caught.value).startswith(f"knowledge source bad.json at {caught.value.where}: not valid JSON (")


def test_a_large_array_is_read_with_little_memory(tmp_path: Path):
    path = tmp_path / "big.json"
    item = {"id": 1, "title": "A note about the headset", "tags": ["vr", "battery"], "body": "x" * 200}
    path.write_text("[" + ",\n".join(json.dumps({**item, "id": i}) for i in range(8000)) + "]", encoding="utf-8")
    assert path.stat().st_size > 2_000_000
    tracemalloc.start()
    try:
        count = sum(1 for line in json_pieces(path, "big.json") if line.startswith("  id: "))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 8000
    assert peak < 1_000_000  # the buffer and one item, not the 2 MB file parsed whole


def test_json_lines_are_a_list_of_documents_and_a_bad_line_is_located(tmp_path: Path):
    path = tmp_path / "notes.jsonl"
    path.write_text('{"a": 1}\n"plain"\n\n[2, 3]\n', encoding="utf-8")
    assert "".join(json_pieces(path, "notes.jsonl")) == "-\n  a: 1\n- plain\n-\n  - 2\n  - 3\n"
    path.write_text('{"a": 1}\n{"b": 2\n{"c": 3}\n', encoding="utf-8")
    with pytest.raises(KnowledgeSourceError, match=r"at line 3, column 1: not valid JSON \(Expecting ',' delimiter\)"):
        list(json_pieces(path, "notes.jsonl"))
    assert kind_of("notes.jsonl") == kind_of("events.NDJSON") == "json"


def test_a_json_source_streams_its_chunks_and_an_error_half_way_is_located(tmp_path: Path):
    folder = tmp_path / "knowledge"
    folder.mkdir()
    (folder / "long.json").write_text(json.dumps(["a line of text " * 20] * 400)[:-1] + ", oops]", encoding="utf-8")
    source = JSONKnowledgeSource(file_paths="long.json", chunk_size=500, chunk_overlap=0)
    chunks = (chunk for unit in source.units(folder) for chunk in unit.chunks())
    first = next(chunks)  # read as it streams: the first chunks come before the error is reached
    assert first.text.startswith("- a line of text")
    with pytest.raises(KnowledgeSourceError, match=r"long\.json at line 1, column \d+: not valid JSON"):
        list(chunks)
