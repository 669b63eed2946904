"""Per-tool counters of one run, as a ``CrewOutput`` reports them.

Apart from the executor that fills them, so outputs (and whoever reads them) never
import the executor.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ToolStats"]


@dataclass
class ToolStats:
    """Per-tool counters of one executor (one run).

    ``calls`` counts every call that named the tool. A call served from the cache
    counts in ``cache_hits``, one stopped by the usage limit in ``refused``, one that
    ran the tool in ``runs`` (timed in ``run_seconds``). ``errors`` counts the
    error results other than refusals: invalid arguments and failed runs.
    """

    calls: int = 0
    cache_hits: int = 0
    runs: int = 0
    errors: int = 0
    refused: int = 0
    run_seconds: float = 0.0
