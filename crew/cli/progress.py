"""Live progress of a crew run, drawn from the event bus.

On a terminal the block of task lines is redrawn in place with plain ANSI escape codes
(no rich: it costs 150 ms to import); anywhere else each event becomes one plain line,
so logs and CI output stay readable and free of control codes. The view only listens:
a slow or broken terminal never slows or breaks the run.

While the block is on screen, whatever else the process prints to the terminal (a
verbose agent, a tool's ``print``) would be wiped by the next redraw; so stdout and
stderr are routed through the view, which lifts the block, lets the text through, and
draws the block again below it. ``paused()`` holds the block off while someone types.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, TextIO

from crew.run.scheduler import RUN_CANCELLED
from crew.tools.messages import is_stand_in

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_MARK = {"waiting": "·", "running": "", "done": "✓", "failed": "✗", "skipped": "-"}
_COLOR = {"waiting": "2", "running": "33", "done": "32", "failed": "31", "skipped": "2"}


@dataclass
class TaskState:
    """What the view knows about one task."""

    name: str
    agent: str = ""
    status: str = "waiting"
    started: float | None = None
    finished: float | None = None
    tokens: int = 0
    tool_calls: int = 0
    cache_hits: int = 0
    tool_errors: int = 0
    last_tool: str = ""
    error: str = ""
    attempts: int = 1
    tools: dict[str, int] = field(default_factory=dict)
    output: Any = None  # the TaskOutput, once the task is finished


class Progress:
    """Follows one run (by ``run_id``) and shows it on ``stream``.

    ``live`` redraws in place (a terminal); otherwise plain lines; with no ``stream``
    it only keeps track (``crew kickoff -q`` still says what finished on Ctrl-C). Use as
    a context manager around the run; afterwards ``tasks`` holds the final state of
    each task.
    """

    def __init__(
        self,
        stream: TextIO | None,
        *,
        run_id: str,
        title: str,
        tasks: list[tuple[str, str]],
        live: bool,
        color: bool = True,
    ) -> None:
        self.stream = stream
        self.run_id = run_id
        self.title = title
        self.live = live and stream is not None
        self.color = color and self.live
        self.tasks: dict[str, TaskState] = {name: TaskState(name, agent) for name, agent in tasks}
        self.started = time.monotonic()
        self._lock = threading.RLock()
        self._drawn = 0  # lines of the block now on screen
        self._paused = 0
        self._open_line = False  # someone else's text ends mid-line: drawing now would split it
        self._routed: dict[str, Any] = {}
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._unsubscribe: Any = None

    # -- lifecycle ---------------------------------------------------------------------

    def __enter__(self) -> Progress:
        from crew.common.events import bus

        self.started = time.monotonic()
        self._unsubscribe = bus.subscribe(self.handle)
        if self.live:
            self._route_output()
            self._draw()
            self._ticker = threading.Thread(target=self._tick, name="crew-progress", daemon=True)
            self._ticker.start()
        else:
            n = len(self.tasks)
            self._line(f"crew {self.title}: {n} task{'' if n == 1 else 's'}")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Stop listening and leave the final picture on screen (idempotent)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=1)
            self._ticker = None
        for name, proxy in self._routed.items():
            if getattr(sys, name) is proxy:
                setattr(sys, name, proxy.stream)
        self._routed = {}
        if self.live:
            with self._lock:
                if self._open_line:
                    self._write("\n")
                    self._open_line = False
                self._paused = 0
            self._draw()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Take the live block off the screen meanwhile (a prompt is waiting for an answer)."""
        with self._lock:
            self._paused += 1
            self._erase()
        try:
            yield
        finally:
            with self._lock:
                self._paused -= 1
                self._open_line = False  # a prompt's line ends with the Enter the terminal echoed

    def _route_output(self) -> None:
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            if stream is self.stream or is_terminal(stream):
                proxy = _Routed(stream, self)
                self._routed[name] = proxy
                setattr(sys, name, proxy)

    def write_through(self, stream: TextIO, text: str) -> int:
        """Someone else's output: lift the block, write the text; the next tick redraws below it."""
        with self._lock:
            self._erase()
            written = stream.write(text)
            with suppress(OSError, ValueError):  # a closed or broken stream
                stream.flush()
            if text:
                self._open_line = not text.endswith("\n")
        return written

    def _tick(self) -> None:
        while not self._stop.wait(0.1):
            self._draw()

    # -- events ------------------------------------------------------------------------

    def handle(self, event: Any) -> None:
        if event.run_id not in (None, self.run_id):
            return
        data = event.data
        with self._lock:
            if event.type == "llm.retry":
                self._line(
                    f"{self._clock()}  model {data.get('model')}: retrying in {data.get('delay')}s "
                    f"({data.get('reason', '')})",
                    always=False,
                )
                return
            step = _STEPS.get(event.type)
            state = self.tasks.get(str(data.get("task"))) if data.get("task") is not None else None
            if step is not None and state is not None:
                step(self, state, event.type, data)

    def _started(self, state: TaskState, kind: str, data: dict[str, Any]) -> None:
        state.status, state.started = "running", time.monotonic()
        state.agent = state.agent or str(data.get("agent") or "")  # the manager, in hierarchical runs
        self._event(state, "running", state.agent)

    def _finished(self, state: TaskState, kind: str, data: dict[str, Any]) -> None:
        if kind == "task.skipped" and data.get("error") == RUN_CANCELLED:
            return  # stopped while running by the run's own cancellation: the interrupt says so itself
        output = data.get("output")
        state.status = kind.split(".", 1)[1]
        state.finished = time.monotonic()
        state.output = output
        state.error = str(data.get("error") or "")
        if output is not None and getattr(output, "usage", None) is not None:
            state.tokens = max(state.tokens, output.usage.total_tokens)
        detail = {
            "done": f"in {_seconds(data.get('duration') or 0.0)}, {state.tokens:,} tokens",
            "failed": state.error,
            "skipped": state.error,
        }[state.status]
        self._event(state, state.status, detail)

    def _retried(self, state: TaskState, kind: str, data: dict[str, Any]) -> None:
        state.attempts = int(data.get("attempt", 1)) + 1
        self._event(state, "retry", f"attempt {state.attempts}: {data.get('error', '')}")

    def _turned(self, state: TaskState, kind: str, data: dict[str, Any]) -> None:
        state.tokens += int(data.get("prompt_tokens") or 0) + int(data.get("completion_tokens") or 0)

    def _called(self, state: TaskState, kind: str, data: dict[str, Any]) -> None:
        tool = str(data.get("tool"))
        state.tool_calls += 1
        state.tools[tool] = state.tools.get(tool, 0) + 1
        state.last_tool = tool
        notes = []
        if data.get("cached"):
            state.cache_hits += 1
            notes.append("cache hit")
        if data.get("refused"):
            notes.append("refused: usage limit")
        elif is_stand_in(data.get("result")):
            notes.append("stand-in: not run")
        elif data.get("status") == "error":
            state.tool_errors += 1
            notes.append("error")
        self._event(state, "tool", tool + (f" ({', '.join(notes)})" if notes else ""))

    def step(self, task: str, text: str) -> None:
        """A verbose agent's step: a line of the view, or above the live block."""
        with self._lock:
            state = self.tasks.get(task)
            if self.live and self.stream is not None:
                self.write_through(self.stream, text + "\n")
            elif state is not None:
                self._event(state, "step", text)
            else:
                self._line(f"{self._clock()}  {text}")

    # -- output ------------------------------------------------------------------------

    def _event(self, state: TaskState, what: str, detail: str) -> None:
        if not self.live:
            width = max(len(n) for n in self.tasks) if self.tasks else 4
            self._line(f"{self._clock()}  {state.name:<{width}}  {what:<8} {detail}".rstrip())

    def _line(self, text: str, always: bool = True) -> None:
        if self.live and not always:
            return
        self._write(text + "\n")

    def _write(self, text: str) -> None:
        if self.stream is None:
            return
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # closed or broken stream: the run goes on
            pass

    def _erase(self) -> None:
        """Remove the block from the screen (the cursor goes back to where it started)."""
        if self._drawn:
            self._write(f"\x1b[{self._drawn}F\x1b[J")
            self._drawn = 0

    def _clock(self) -> str:
        return f"{time.monotonic() - self.started:7.2f}s"

    def _draw(self) -> None:
        with self._lock:
            if self._paused or self._open_line:
                return
            lines = self.render()
            width = shutil.get_terminal_size((100, 20)).columns
            text = ""
            if self._drawn:
                text += f"\x1b[{self._drawn}F\x1b[J"
            text += "\n".join(_clip(line, width) for line in lines) + "\n"
            self._drawn = len(lines)
            self._write(text)

    def render(self) -> list[str]:
        """The live block: a header, then one line per task."""
        now = time.monotonic()
        lines = [self._header(now)]
        width = max((len(n) for n in self.tasks), default=4)
        agent_width = max((len(t.agent) for t in self.tasks.values()), default=0)
        frame = _SPINNER[int(now * 10) % len(_SPINNER)]
        for state in self.tasks.values():
            mark = frame if state.status == "running" else _MARK[state.status]
            elapsed = "" if state.started is None else _seconds((state.finished or now) - state.started)
            detail = state.error if state.status in ("failed", "skipped") else _tools_text(state)
            line = (
                f" {mark} {state.name:<{width}}  {state.agent:<{agent_width}}  {state.status:<8} "
                f"{elapsed:>7}  {state.tokens:>7,} tok  {detail}"
            )
            lines.append(self._paint(_COLOR[state.status], line.rstrip()))
        return lines

    def _header(self, now: float) -> str:
        tokens = sum(t.tokens for t in self.tasks.values())
        counts = {s: sum(1 for t in self.tasks.values() if t.status == s) for s in _MARK}
        summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n and s != "waiting") or "starting"
        return (
            self._paint("1", f"crew {self.title}") + f"  {_seconds(now - self.started)}  {tokens:,} tokens  ({summary})"
        )

    def _paint(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def finished_outputs(self) -> list[Any]:
        """The TaskOutputs of the tasks that finished (done, failed or skipped), in task order."""
        return [t.output for t in self.tasks.values() if t.output is not None]

    def summary(self) -> str:
        """Which tasks finished and which did not: said when a run is interrupted."""
        finished = [t.name for t in self.tasks.values() if t.status in ("done", "failed", "skipped")]
        running = [t.name for t in self.tasks.values() if t.status == "running"]
        waiting = [t.name for t in self.tasks.values() if t.status == "waiting"]
        parts = [f"finished: {', '.join(finished) or 'none'}"]
        if running:
            parts.append(f"stopped while running: {', '.join(running)}")
        if waiting:
            parts.append(f"not started: {', '.join(waiting)}")
        return "; ".join(parts)


_STEPS: dict[str, Any] = {
    "task.start": Progress._started,
    "task.done": Progress._finished,
    "task.failed": Progress._finished,
    "task.skipped": Progress._finished,
    "task.retry": Progress._retried,
    "tool.call": Progress._called,
    "agent.turn": Progress._turned,
}
"""What the view does with each event of a task: ``step(progress, state, event type, data)``."""


def _tools_text(state: TaskState) -> str:
    """A task line's tool column: calls, cache hits, failures, and the last tool while it runs."""
    if not state.tool_calls:
        return ""
    text = f"tools {state.tool_calls}"
    if state.cache_hits:
        text += f", {state.cache_hits} cached"
    if state.tool_errors:
        text += f", {state.tool_errors} failed"
    if state.status == "running" and state.last_tool:
        text += f", last {state.last_tool}"
    return text


class _Routed:
    """Stands in for ``sys.stdout``/``sys.stderr`` while the live block is on screen."""

    def __init__(self, stream: TextIO, progress: Progress) -> None:
        self.stream = stream
        self._progress = progress

    def write(self, text: str) -> int:
        return self._progress.write_through(self.stream, text)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding ...
        return getattr(self.stream, name)


def is_terminal(stream: Any) -> bool:
    """Whether ``stream`` is an interactive terminal; ``None`` or a closed or detached stream is not."""
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _seconds(value: float) -> str:
    return f"{value:.2f}s" if value < 60 else f"{int(value // 60)}m{int(value % 60):02d}s"


def _clip(line: str, width: int) -> str:
    """Cut a line to the terminal width (wrapped lines would break the redraw)."""
    visible = 0
    out = []
    i = 0
    while i < len(line):
        if line[i] == "\x1b":
            end = line.find("m", i)
            out.append(line[i : end + 1])
            i = end + 1
            continue
        if visible >= width - 1:
            out.append("\x1b[0m" if "\x1b" in line else "")
            break
        out.append(line[i])
        visible += 1
        i += 1
    return "".join(out)
