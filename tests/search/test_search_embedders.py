"""Embedders from specs: the offline default, keywords only, litellm's models over real HTTP."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from crew.errors import ConfigError, EmbedderMismatchError, LLMError
from crew.search import Doc, SearchIndex, resolve_embedder


def test_none_and_default_name_the_offline_embedder_and_none_means_keywords():
    pytest.importorskip("wordllama", reason="the memory extra is not installed")
    default = resolve_embedder(None)
    assert default is not None and default.name == "wordllama/l2_supercat" and default.dimension == 256
    assert resolve_embedder("default").name == default.name
    assert resolve_embedder("none") is None
    vectors = default.embed(["one text", "another"])
    assert vectors.shape == (2, 256) and str(vectors.dtype) == "float32"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("text-embedding-3-small", "not a model name: write 'provider/model'"),
        ({"api_base": "http://x"}, "needs 'model'"),
        ({"model": "openai/x", "temperature": 1}, "unknown embedder setting 'temperature'"),
        (42, "not int"),
    ],
)
def test_a_bad_spec_is_a_config_error_naming_the_setting(spec, message):
    with pytest.raises(ConfigError, match=message) as caught:
        resolve_embedder(spec, where="crew.yaml: memory.embedder")
    assert str(caught.value).startswith("crew.yaml: memory.embedder")


def test_without_the_extra_the_error_names_the_install(monkeypatch):
    import crew.search.wordllama as module

    monkeypatch.setattr(module, "_model", [])
    monkeypatch.setitem(sys.modules, "wordllama", None)  # as if not installed
    with pytest.raises(ConfigError, match=r"memory.embedder: .*pip install 'crew-agents\[memory\]'"):
        resolve_embedder(None, where="memory.embedder")


def test_crewai_shaped_spec_reads_provider_and_config():
    embedder = resolve_embedder({"provider": "ollama", "config": {"model": "nomic-embed-text", "url": "http://h:1"}})
    assert embedder is not None and embedder.name == "ollama/nomic-embed-text"


def test_a_litellm_model_embeds_over_http_and_the_index_records_it(tmp_path: Path, openai_server):
    spec = {"model": "openai/text-embedding-3-small", "api_base": openai_server.url, "api_key": "sk-test-embedding-key"}
    embedder = resolve_embedder(spec)
    assert embedder is not None and embedder.dimension is None
    path = tmp_path / "remote.db"
    with SearchIndex(path, "memory", embedder) as ix:
        ix.add([Doc("a", "alpha beta gamma"), Doc("b", "delta epsilon"), Doc("c", "zeta eta theta")])
        hits = ix.search("epsilon delta")
    assert hits[0].doc.id == "b"
    assert embedder.dimension == 64
    assert SearchIndex.recorded(path, "memory") == ("openai/text-embedding-3-small", 64)
    inputs = [body["input"] for body in openai_server.embedding_requests]
    assert inputs[0] == ["alpha beta gamma", "delta epsilon", "zeta eta theta"]
    assert b"sk-test-embedding-key" not in path.read_bytes()
    with pytest.raises(EmbedderMismatchError, match="indexed with 'openai/text-embedding-3-small' \\(64 dimensions\\)"):
        SearchIndex(path, "memory", resolve_embedder({"model": "openai/other", "api_base": openai_server.url}))


def test_a_failing_embedding_call_is_one_error_naming_the_model(openai_server):
    embedder = resolve_embedder({"model": "openai/text-embedding-3-small", "api_base": openai_server.url + "/nope"})
    assert embedder is not None
    with pytest.raises(LLMError, match="embedding with 'openai/text-embedding-3-small' failed"):
        embedder.embed(["x"])
