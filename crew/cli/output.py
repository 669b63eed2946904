"""What the ``crew`` command writes: scrubbed of secrets, and stdout kept for the result.

Two guards sit around every command:

- ``scrubbed_streams`` replaces ``sys.stdout`` and ``sys.stderr`` with writers that pass
  each text through :func:`crew.common.secrets.scrub`, so no message, progress line, JSON
  document or answer can print a key the run knows.
- ``tool_output_to_stderr`` (while a crew runs) sends everything else that writes to
  stdout, a tool's ``print`` or a subprocess it starts included, to stderr: stdout
  carries the result only, so ``--json | jq`` and ``> answer.md`` stay intact.
  Loading a crew folder is guarded too: importing its ``tools.py`` runs its code.
- ``result_stream`` is the writer on the real stdout for output that is written while
  that guard is on (a ``--stream`` of events, the JSON Lines of ``--for-each``).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from crew.common.secrets import scrub


class ScrubbingStream:
    """A text stream that scrubs secrets from what it writes; everything else is delegated."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(scrub(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding, buffer ...
        return getattr(self.stream, name)


@contextlib.contextmanager
def scrubbed_streams() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` scrubbed for the duration (restored after, for in-process callers)."""
    saved = sys.stdout, sys.stderr
    sys.stdout = ScrubbingStream(sys.stdout)  # type: ignore[assignment]
    sys.stderr = ScrubbingStream(sys.stderr)  # type: ignore[assignment]
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        sys.stdout, sys.stderr = saved


@contextlib.contextmanager
def tool_output_to_stderr() -> Iterator[None]:
    """Route stdout (the Python object and, when it is a real file, descriptor 1) to stderr meanwhile.

    The descriptor matters: a tool that runs a subprocess, or C code that writes to fd 1,
    bypasses ``sys.stdout``. The original descriptor is put back before the result is printed.
    """
    out, err = sys.stdout, sys.stderr
    with contextlib.suppress(OSError, ValueError):
        out.flush()
    saved_fd: int | None = None
    try:
        out_fd, err_fd = out.fileno(), err.fileno()
        if out_fd != err_fd:
            saved_fd = os.dup(out_fd)
            os.dup2(err_fd, out_fd)
    except (OSError, ValueError, AttributeError):  # not a real file (captured, StringIO): Python level only
        saved_fd = None
    sys.stdout = err
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            err.flush()
        sys.stdout = out
        if saved_fd is not None:
            os.dup2(saved_fd, out.fileno())
            os.close(saved_fd)


@contextlib.contextmanager
def result_stream() -> Iterator[Any]:
    """A scrubbed writer on the real stdout that outlives ``tool_output_to_stderr`` (the result goes there).

    Enter it before ``tool_output_to_stderr``: it duplicates descriptor 1 while that still
    is the real stdout, so what it writes is the result while everything else goes to stderr.
    """
    try:
        fd = os.dup(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (captured): write to it as it is
        yield sys.stdout
        return
    raw = os.fdopen(fd, "w", encoding="utf-8", errors="replace", buffering=1)
    try:
        yield ScrubbingStream(raw)  # type: ignore[arg-type]
    finally:
        raw.close()


def report_store_loss(run_id: str) -> None:
    """Say once, after the run, that the store could not record all of it (a full disk), and why."""
    recorder = sys.modules.get("crew.store.recorder")  # not imported: no store was used
    message = getattr(recorder, "lost_writes", {}).pop(run_id, None)
    if message:
        print(f"crew: {plain(message)}", file=sys.stderr)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Characters a terminal acts on (escapes, carriage returns, C1 controls, bidirectional overrides)."""


def plain(text: str) -> str:
    """``text`` safe to print: every control character shown as its escape (``\\x1b``), never acted on.

    Outputs, errors and arguments in the store come from models and tools: an escape sequence
    in them could rewrite the terminal's title, hide lines or fake what the run did.
    """
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)
