"""The run store: every run recorded in SQLite as it happens, to inspect, replay or resume.

``RunStore`` is the file; ``crew.store.recorder`` writes a run into it, ``crew.store.continuation``
decides what a resume or replay may reuse, ``crew.store.timeline`` draws a run as a page.
"""

from __future__ import annotations

from crew.store.records import RunDetail, StoredModelCall, StoredRun, StoredTask, StoredToolCall
from crew.store.store import RunStore

__all__ = ["RunDetail", "RunStore", "StoredModelCall", "StoredRun", "StoredTask", "StoredToolCall"]
