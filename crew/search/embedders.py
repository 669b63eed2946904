"""Embedders: what turns texts into vectors, and ``resolve_embedder``, which picks one from a spec.

The default is WordLlama, whose 16 MB of weights ship in its wheel, so memory works with no key
and no network. Any embedding model litellm serves may be chosen instead, and ``"none"`` means
keywords only. A spec is what a user writes in YAML or Python::

    None, "default", "wordllama"              -> WordLlama (offline)
    "none"                                    -> no embedder: keyword search only
    "openai/text-embedding-3-small"           -> litellm
    {"model": "ollama/nomic-embed-text", "api_base": "http://localhost:11434"}
    {"provider": "openai", "config": {"model": "text-embedding-3-small"}}   (CrewAI's shape)

Nothing here imports numpy, WordLlama or litellm until an embedder is used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from crew.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

DEFAULT_NAMES = ("default", "wordllama", "wordllama/l2_supercat")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of one dimension.

    ``name`` is recorded with every collection it fills, so vectors of two embedders are never
    mixed; ``dimension`` is the vectors' length, or ``None`` until the first call (a remote model
    says its dimension only by answering).
    """

    name: str

    @property
    def dimension(self) -> int | None: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A float32 array of shape ``(len(texts), dimension)``."""
        ...


def resolve_embedder(spec: str | Mapping[str, Any] | Embedder | None, *, where: str = "embedder") -> Embedder | None:
    """The embedder ``spec`` names (see the module docstring), or ``None`` for keywords only.

    ``where`` names the setting in errors (``crew.yaml: memory.embedder``). An embedder object
    is returned as it is.
    """
    if spec is None:
        return _wordllama(where)
    if isinstance(spec, str):
        return _from_string(spec.strip(), where, {})
    if isinstance(spec, Mapping):
        return _from_mapping(spec, where)
    if isinstance(spec, Embedder):
        return spec
    raise ConfigError(f"{where}: an embedder is a model name or a mapping with 'model', not {type(spec).__name__}")


def _from_string(name: str, where: str, options: Mapping[str, Any]) -> Embedder | None:
    if name.lower() in ("none", "off", "false", "keywords"):
        return None
    if name.lower() in DEFAULT_NAMES:
        return _wordllama(where)
    if "/" not in name:
        raise ConfigError(
            f"{where}: embedder '{name}' is not a model name: write 'provider/model' "
            "(e.g. 'openai/text-embedding-3-small', 'ollama/nomic-embed-text'), 'default' or 'none'"
        )
    from crew.search.remote import LiteLLMEmbedder

    return LiteLLMEmbedder(name, where=where, **options)


_OPTIONS = ("api_base", "api_key", "dimensions")


def _from_mapping(spec: Mapping[str, Any], where: str) -> Embedder | None:
    """``{"model": ..., "api_base": ...}`` or CrewAI's ``{"provider": ..., "config": {...}}``."""
    config = dict(spec.get("config") or {})
    merged = {**{k: v for k, v in spec.items() if k not in ("config", "provider")}, **config}
    model = merged.pop("model", None) or merged.pop("model_name", None)
    provider = spec.get("provider")
    if model is None and provider is None:
        raise ConfigError(f"{where}: an embedder mapping needs 'model' (e.g. 'openai/text-embedding-3-small')")
    if model is None:
        model = str(provider)
    elif provider and "/" not in str(model):
        model = f"{provider}/{model}"
    if "url" in merged and "api_base" not in merged:
        merged["api_base"] = merged.pop("url")
    unknown = sorted(set(merged) - set(_OPTIONS))
    if unknown:
        raise ConfigError(f"{where}: unknown embedder setting '{unknown[0]}' (known: model, {', '.join(_OPTIONS)})")
    return _from_string(str(model), where, merged)


def _wordllama(where: str) -> Embedder:
    from crew.search.wordllama import WordLlamaEmbedder

    return WordLlamaEmbedder(where=where)
