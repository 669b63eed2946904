"""litellm, imported once per process, possibly in the background: the one module that imports it.

The import costs seconds, so it never happens at ``import crew``: :func:`prewarm_litellm`
starts it in a daemon thread as soon as a crew knows it needs a litellm model, letting
loading and validation overlap it, and a call joins an import in flight instead of
repeating it. Before importing we switch off litellm's remote cost-map fetch, which
otherwise waits on the network; after it, litellm's OpenAI path gets crew's HTTP client,
which does not follow a redirect to another origin (:mod:`crew.models.litellm_http`).
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Any

__all__ = ["aload_litellm", "litellm_loaded", "load_litellm", "prewarm_litellm"]


_litellm: Any = None
_import_lock = threading.Lock()  # held for the whole import: waiting on it joins an import in flight
_prewarm_lock = threading.Lock()  # guards only the thread bookkeeping, so prewarm never waits on an import
_prewarm_thread: threading.Thread | None = None


def load_litellm() -> Any:
    """Import and configure litellm (once); a concurrent background import is joined, not repeated."""
    global _litellm
    if _litellm is not None:
        return _litellm
    with _import_lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm

            litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banners on stdout
            from crew.models.litellm_http import install

            install(litellm)  # a redirect to another origin is refused, not followed with the call's headers
            # Nothing else calls out: the cost map is local (above); litellm sends no telemetry
            # unless a callback is configured, and we configure none.
            _litellm = litellm
    return _litellm


def litellm_loaded() -> bool:
    """Whether litellm is imported and ready; an import still in flight does not count."""
    return _litellm is not None


def prewarm_litellm() -> None:
    """Start importing litellm in a daemon thread; idempotent, and a no-op once it is loaded."""
    global _prewarm_thread
    with _prewarm_lock:
        if _litellm is not None or _prewarm_thread is not None:
            return
        _prewarm_thread = threading.Thread(target=_prewarm, name="crew-litellm-import", daemon=True)
        _prewarm_thread.start()


def _prewarm() -> None:
    with contextlib.suppress(Exception):  # the first real call imports again and reports the error
        load_litellm()


async def aload_litellm() -> Any:
    if _litellm is not None:
        return _litellm
    import asyncio  # imported where a loop runs: loading a crew needs none

    return await asyncio.to_thread(load_litellm)  # a cold import must not freeze the event loop
