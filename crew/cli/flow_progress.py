"""What ``crew kickoff`` of a flow shows while it runs: one line per step, route and crew task.

The lines come from the bus (``step.started``, ``step.done``, ``step.failed``,
``route.chosen``, and the crews' ``task.done`` / ``task.failed`` under the step that kicked
them off). On stderr as progress (``-q`` silences it); with ``--stream`` on stdout, as the
run's output: text lines, or with ``--json`` one JSON object per event (JSON Lines), the
last one ``{"type": "output", ...}`` as for a crew's stream.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

_FLOW_EVENTS = ("flow.started", "flow.done", "step.started", "step.done", "step.failed", "route.chosen")
_CREW_EVENTS = ("task.done", "task.failed")


class FlowProgress:
    """Subscribed to the bus from ``__enter__`` to ``__exit__``; writes a line per event it knows
    (to ``out``; none without one) and keeps which step runs finished and which are running."""

    def __init__(self, out: IO[str] | None, *, as_json: bool = False) -> None:
        self.out, self.as_json = out, as_json
        self._lock = threading.Lock()
        self._unsubscribe: Callable[[], None] | None = None
        self.steps = 0
        self.finished: list[str] = []
        self.running: dict[tuple[str, int], str] = {}

    def __enter__(self) -> FlowProgress:
        from crew.common.events import bus

        self._unsubscribe = bus.subscribe(self._on)
        return self

    def summary(self) -> str:
        """Which step runs finished and which were running: said when a run is interrupted (as a crew's
        ``Progress.summary`` says its tasks)."""
        with self._lock:
            parts = [f"finished: {', '.join(self.finished) or 'none'}"]
            if self.running:
                parts.append(f"stopped while running: {', '.join(self.running.values())}")
        return "; ".join(parts)

    def _track(self, kind: str, data: dict[str, Any]) -> None:
        key = (str(data.get("step")), int(data.get("number") or 1))
        shown = key[0] if key[1] == 1 else f"{key[0]} #{key[1]}"
        with self._lock:
            if kind == "step.started":
                self.running[key] = shown
            elif kind in ("step.done", "step.failed") and self.running.pop(key, None) is not None:
                self.finished.append(shown)

    def __exit__(self, *_: Any) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _on(self, event: Any) -> None:
        if event.type not in _FLOW_EVENTS and event.type not in _CREW_EVENTS:
            return
        if event.type in ("step.started", "step.done", "step.failed"):
            self._track(event.type, event.data)
        if event.type in _CREW_EVENTS and "task" not in event.data:
            return
        line = self._json(event) if self.as_json else _text(event.type, event.data)
        if line is None or self.out is None:
            return
        with self._lock:
            if event.type == "step.done":
                self.steps += 1
            self.out.write(line + "\n")
            self.out.flush()

    def _json(self, event: Any) -> str:
        data = {k: v for k, v in event.data.items() if k != "state"}
        return json.dumps({"type": event.type, "run_id": event.run_id, **data}, ensure_ascii=False, default=str)


def _text(kind: str, data: dict[str, Any]) -> str | None:
    step = data.get("step")
    if kind == "flow.started":
        return f"flow {data.get('flow')}: started"
    if kind == "flow.done":
        return f"flow {data.get('flow')}: {data.get('status')} after {data.get('steps')} step runs"
    if kind == "step.started":
        return f"  step {step} (#{data.get('number')}) started"
    if kind == "step.done":
        reused = ", reused from the store" if data.get("reused") else ""
        return f"  step {step} done in {float(data.get('duration') or 0):.2f} s{reused}"
    if kind == "step.failed":
        return f"  step {step} failed: {data.get('error')}"
    if kind == "route.chosen":
        heard = "" if data.get("heard", True) else " (no step listens for it: the route ends here)"
        return f"  route {step} -> {data.get('label')!r}{heard}"
    if kind == "task.done":
        return f"    task {data.get('task')!r} done ({data.get('agent') or 'crew'})"
    if kind == "task.failed":
        return f"    task {data.get('task')!r} failed: {data.get('error')}"
    return None


def progress_for(args: Any) -> FlowProgress:
    """The view the options ask for: the stream on stdout, progress on stderr, or nothing (``-q``)."""
    if getattr(args, "stream", False):
        return FlowProgress(sys.stdout, as_json=bool(args.json))
    return FlowProgress(None if args.quiet else sys.stderr)


__all__ = ["FlowProgress", "progress_for"]
