"""Embedding models litellm serves (``openai/text-embedding-3-small``, ``ollama/nomic-embed-text``).

It calls ``litellm.embedding`` / ``aembedding`` directly rather than through a model door (an
embedding request has none of a chat call's tools, streaming or retries by turn), but loads litellm
the one way crew does (``crew.models.litellm_loading``), so the offline cost map and the client that
refuses cross-origin redirects apply to embeddings too. litellm loads only at the first call.
The API key is registered as a secret (never logged nor recorded); the collection records only
the model name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from crew.common import secrets
from crew.errors import LLMError
from crew.search.arrays import as_matrix, numpy_or_error

if TYPE_CHECKING:
    import numpy as np

BATCH = 128
"""Texts per request: providers cap a request's inputs (OpenAI at 2048), and smaller batches fail smaller."""


class LiteLLMEmbedder:
    """An embedding model reached through litellm; ``dimension`` is known after the first answer."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        dimensions: int | None = None,
        where: str = "embedder",
    ) -> None:
        numpy_or_error(where)
        self.name = model
        self.api_base = api_base
        self._api_key = api_key
        self._dimensions = dimensions
        self._dimension: int | None = dimensions
        secrets.register(api_key)
        secrets.register_url(api_base)

    @property
    def dimension(self) -> int | None:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed from sync code (``litellm.embedding``: no event loop of our own per call)."""
        from crew.models.litellm_loading import load_litellm

        litellm = load_litellm()
        return self._collect(texts, lambda batch: litellm.embedding(model=self.name, input=batch, **self._options()))

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed from async code (``litellm.aembedding``)."""
        from crew.models.litellm_loading import aload_litellm

        litellm = await aload_litellm()
        parts = []
        for start in range(0, len(texts), BATCH):
            batch = list(texts[start : start + BATCH])
            try:
                parts.append(_rows(await litellm.aembedding(model=self.name, input=batch, **self._options())))
            except Exception as exc:  # noqa: BLE001 - any provider failure is one error naming the model
                raise self._failure(exc) from None
        return self._matrix(parts, len(texts))

    def _collect(self, texts: Sequence[str], call: Callable[[list[str]], Any]) -> np.ndarray:
        parts = []
        for start in range(0, len(texts), BATCH):
            try:
                parts.append(_rows(call(list(texts[start : start + BATCH]))))
            except Exception as exc:  # noqa: BLE001 - any provider failure is one error naming the model
                raise self._failure(exc) from None
        return self._matrix(parts, len(texts))

    def _matrix(self, parts: list[list[Any]], count: int) -> np.ndarray:
        np = numpy_or_error(self.name)
        if count == 0:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        matrix = as_matrix([row for part in parts for row in part], count, self.name)
        self._dimension = int(matrix.shape[1])
        return matrix

    def _options(self) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if self.api_base:
            options["api_base"] = self.api_base
        if self._api_key:
            options["api_key"] = self._api_key
        if self._dimensions:
            options["dimensions"] = self._dimensions
        return options

    def _failure(self, exc: Exception) -> LLMError:
        message = f"embedding with '{self.name}' failed: {type(exc).__name__}: {exc}"
        return LLMError(secrets.scrub(message), model=self.name)


def _rows(response: Any) -> list[Any]:
    rows = sorted(response.data, key=lambda item: _field(item, "index"))
    return [_field(row, "embedding") for row in rows]


def _field(item: Any, key: str) -> Any:
    return item[key] if isinstance(item, dict) else getattr(item, key)
