"""numpy, imported when vectors are used, and the one check every embedder's output passes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crew.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

INSTALL_HINT = "pip install 'crew-agents[memory]'"


def as_matrix(vectors: Any, count: int, name: str) -> np.ndarray:
    """``vectors`` as a C-contiguous float32 matrix of ``count`` rows, or a clear error."""
    np = numpy_or_error(name)
    matrix = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
    if matrix.ndim != 2 or matrix.shape[0] != count:
        raise ValueError(f"embedder '{name}' returned shape {matrix.shape} for {count} texts")
    return matrix


def numpy_or_error(where: str) -> Any:
    """The numpy module, or a ``ConfigError`` naming the install (vectors need the memory extra)."""
    try:
        import numpy
    except ImportError:
        raise ConfigError(f"{where}: vector search needs numpy, from the memory extra: {INSTALL_HINT}") from None
    return numpy
