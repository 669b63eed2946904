"""``crew kickoff --stream``: the run's text as it arrives, or its events as JSON Lines.

On a terminal each task's text appears under its name (a new heading whenever the text
switches to another task, since tasks running side by side interleave); piped, every
complete line of text is printed once, prefixed with ``[task]``, so ``grep`` and logs see
whole lines. ``--json --stream`` writes one JSON object per event (``crew.stream.to_json``),
the last one ``{"type": "output", ...}``. Either way stdout gets the stream and nothing
else; tool calls, task ends and failures go to stderr as short lines on a terminal.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any, TextIO

__all__ = ["print_stream"]


async def print_stream(events: AsyncIterator[Any], *, as_json: bool, out: TextIO | None = None) -> Any:
    """Print ``events`` as they come; returns the run's output (the last item)."""
    from crew.cli.progress import is_terminal
    from crew.stream import StreamEvent, to_json

    sink: TextIO = out if out is not None else sys.stdout
    view: _View = _JsonLines(sink) if as_json else _Terminal(sink) if is_terminal(sink) else _Lines(sink)
    last: Any = None
    try:
        async for item in events:
            last = item
            if isinstance(item, StreamEvent):
                view.event(item)
            elif as_json:
                sink.write(to_json(item) + "\n")
    finally:
        view.close()
        sink.flush()
    return last


class _View:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def event(self, event: Any) -> None: ...

    def close(self) -> None: ...


class _JsonLines(_View):
    def event(self, event: Any) -> None:
        from crew.stream import to_json

        self.out.write(to_json(event) + "\n")
        self.out.flush()


class _Terminal(_View):
    """Text as it arrives, under a heading per task; other events as dim notes."""

    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        self.current: str | None = None
        self.at_line_start = True

    def event(self, event: Any) -> None:
        kind = event.type
        if kind == "text.delta":
            if event.task != self.current:
                self._heading(f"── {event.task} ({event.agent}) ──")
                self.current = event.task
            self.out.write(event.text)
            self.at_line_start = event.text.endswith("\n")
            self.out.flush()
        elif kind == "tool.started":
            self._note(f"· {event.task}: {event.tool}({_short(event.args)})")
        elif kind == "approval.requested":
            self._note(f"· {event.task}: {event.tool} waits for approval (call {event.call_id})")
        elif kind in ("task.failed", "task.skipped"):
            self._note(f"· task '{event.task}' {kind.split('.')[1]}: {getattr(event, 'error', '') or event.reason}")

    def _heading(self, text: str) -> None:
        if not self.at_line_start:
            self.out.write("\n")
        self.out.write(f"\n\x1b[1m{text}\x1b[0m\n")
        self.at_line_start = True

    def _note(self, text: str) -> None:
        if not self.at_line_start:
            self.out.write("\n")
        self.out.write(f"\x1b[2m{text}\x1b[0m\n")
        self.at_line_start = True
        self.current = None  # the text that follows gets its heading again
        self.out.flush()

    def close(self) -> None:
        if not self.at_line_start:
            self.out.write("\n")


class _Lines(_View):
    """Whole lines only, each prefixed with its task: ``[task] text``."""

    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        self.partial: dict[str, str] = {}

    def event(self, event: Any) -> None:
        if event.type == "text.delta":
            text = self.partial.get(event.task, "") + event.text
            *lines, rest = text.split("\n")
            for line in lines:
                self.out.write(f"[{event.task}] {line}\n")
            self.partial[event.task] = rest
            if lines:
                self.out.flush()
        elif event.type == "agent.turn" or event.type.startswith("task."):
            self._flush(getattr(event, "task", None))

    def _flush(self, task: str | None) -> None:
        rest = self.partial.pop(task, "") if task is not None else ""
        if rest:
            self.out.write(f"[{task}] {rest}\n")

    def close(self) -> None:
        for task in list(self.partial):
            self._flush(task)


def _short(args: dict[str, Any], limit: int = 60) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return text if len(text) <= limit else text[: limit - 1] + "…"
