"""The default embedder: WordLlama, offline, its weights inside its wheel.

``WordLlama.load`` downloads its weights from Hugging Face unless told where they are and
told not to: the wheel ships ``weights/l2_supercat_256.safetensors`` and its tokenizer in the
package folder, so loading points ``cache_dir`` there with ``disable_download=True``. The model
is loaded once per process (about 0.5 s) and shared; it is a table of token vectors, averaged,
so it embeds thousands of short texts a second on one core.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from crew.errors import ConfigError
from crew.search.arrays import INSTALL_HINT, as_matrix

if TYPE_CHECKING:
    import numpy as np

MODEL = "l2_supercat"
DIMENSION = 256

_lock = threading.Lock()
_model: list[Any] = []


class WordLlamaEmbedder:
    """WordLlama ``l2_supercat`` at 256 dimensions, unit-normalised vectors."""

    name = f"wordllama/{MODEL}"

    def __init__(self, *, where: str = "embedder") -> None:
        self._where = where
        _load(where)  # fail now, where the setting is read, not at the first remember

    @property
    def dimension(self) -> int:
        return DIMENSION

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            import numpy

            return numpy.zeros((0, DIMENSION), dtype=numpy.float32)
        vectors = _load(self._where).embed(list(texts), norm=True)
        return as_matrix(vectors, len(texts), self.name)


def _import_keeping_logging() -> tuple[Any, Any]:
    """Import wordllama, undoing what its import does to the application's logging.

    Its ``__init__`` calls ``logging.basicConfig(level=INFO)``: a root handler and level the
    application did not ask for, after which every INFO record of every library (crew's own
    events among them) is printed on stderr. The root logger is put back as it was.
    """
    import logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama
        from wordllama import WordLlama
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)
    return wordllama, WordLlama


def _load(where: str) -> Any:
    with _lock:
        if _model:
            return _model[0]
        try:
            wordllama, WordLlama = _import_keeping_logging()
        except ImportError:
            raise ConfigError(
                f"{where}: the default embedder (WordLlama) is not installed: {INSTALL_HINT} "
                "(or set the embedder to 'none' for keyword search only)"
            ) from None
        from pathlib import Path

        folder = Path(wordllama.__file__).parent
        try:
            model = WordLlama.load(config=MODEL, cache_dir=folder, dim=DIMENSION, disable_download=True)
        except Exception as exc:  # noqa: BLE001 - a broken install is a located error, not a traceback
            raise ConfigError(
                f"{where}: WordLlama's weights could not be loaded from {folder} ({type(exc).__name__}: {exc}); "
                f"reinstall it: {INSTALL_HINT}"
            ) from None
        _model.append(model)
        return model
