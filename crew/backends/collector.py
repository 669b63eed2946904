"""The cyclic garbage collector, spaced out while a big batch runs.

Thousands of kickoffs alive at once keep tens of thousands of young objects alive across
their awaits, so each young collection (every 700 allocations by default) walks them
again: at 2,000 concurrent kickoffs a third of the wall time went to the collector
(``gc.disable()`` took 24 s to 15 s here). While a batch with at least
``BIG_BATCH`` kickoffs at once runs, the first generation's threshold is raised to
``PER_KICKOFF`` objects for each kickoff the batch runs at once (at least
``YOUNG_THRESHOLD``): a running kickoff holds about 330 tracked objects at its peak, so the
young generation then fills only as finished kickoffs leave outputs (and any garbage in
cycles) behind, and the collector walks what is alive about once instead of once per 700
allocations. At 1,000 kickoffs at once that took the collector's share from about a fifth
of the batch's time to a few percent. The older thresholds, and every object's fate, are
unchanged; garbage in cycles waits at most one young generation longer (bounded by the
concurrency). The previous thresholds come back when the last big batch of the process ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["BIG_BATCH", "PER_KICKOFF", "YOUNG_THRESHOLD", "spaced_collections"]

BIG_BATCH = 100
YOUNG_THRESHOLD = 20_000
PER_KICKOFF = 500

_lock = threading.Lock()
_active = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def spaced_collections(concurrency: int) -> Iterator[None]:
    """Young collections spaced to the batch's size while it runs, if it is big (see the module's text)."""
    if concurrency < BIG_BATCH:
        yield
        return
    global _active, _saved
    with _lock:
        if _active == 0:
            _saved = gc.get_threshold()
            young, *older = _saved
            gc.set_threshold(max(young, YOUNG_THRESHOLD, PER_KICKOFF * concurrency), *older)
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
