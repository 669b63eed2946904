"""``crew kickoff PATH --for-each inputs.jsonl``: one kickoff per input line, JSON Lines out.

Each input line is a JSON object of inputs (over the crew's defaults and ``-i`` pairs).
Every line is checked before anything runs: a bad line is an error naming its line
number. One result line per input is written the moment it is known (``--ordered``
holds early ones back to keep input order), so a batch stopped by Ctrl-C or a crash
keeps everything that finished. Progress (done / failed / running, tokens) goes to
stderr; exit code 0 only when every input is done.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import IO, Any

from crew.cli import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_PAUSED, UsageError
from crew.cli.ray_local import stop_ray

_MAX_REPORTED = 20  # bad lines listed before "... and N more"


def run(args: argparse.Namespace, project: Any, given: dict[str, Any]) -> int:
    """Check every input line and ``-o``, then run the batch with stdout kept for the JSON Lines."""
    from crew.backends import BatchStatus
    from crew.cli import open_output

    source = Path(args.for_each)
    inputs = read_inputs(source, project, given)
    if args.max_concurrency < 1:
        raise UsageError(f"--max-concurrency must be at least 1, got {args.max_concurrency}")
    file = open_output(args.output) if args.output else None  # before anything runs: a bad -o costs nothing
    status = BatchStatus(total=len(inputs))
    interrupted = _run_batch(args, project, inputs, status, file)
    where = f"; results of finished inputs are in {args.output}" if args.output else ""
    if interrupted:
        print(f"crew: interrupted; {status.summary()}{where}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(EXIT_INTERRUPTED)  # threads may still sit in blocking tool calls
    return _report(args, status)


def _run_batch(
    args: argparse.Namespace, project: Any, inputs: list[dict[str, Any]], status: Any, file: IO[str] | None
) -> bool:
    """Run every kickoff, writing each result line as it comes; True when Ctrl-C stopped the batch."""
    import asyncio

    from crew.cli import interruptible
    from crew.cli.output import result_stream, tool_output_to_stderr

    interrupted = False
    # A tool's print, or a subprocess it starts, goes to stderr (as in one kickoff): stdout holds the lines only.
    with result_stream() as stdout, tool_output_to_stderr():
        view = _View(status, None if args.quiet else sys.stderr)
        writer = _Writer(file or stdout, ordered=args.ordered)
        backend = None
        try:
            backend = _backend(args)
            runner = asyncio.Runner()
            try:
                runner.run(interruptible(_batch(project.crew, inputs, backend, args, status, writer, view)))
            except KeyboardInterrupt:
                interrupted = True
            finally:
                writer.flush_held()
                view.close()
            if not interrupted:
                runner.close()
        finally:
            if file is not None:
                file.close()
            if backend is not None:
                _shutdown_ray(backend)
            stop_ray()  # a `backend: ray` crew's own instance, started by its first kickoff
    return interrupted


def _report(args: argparse.Namespace, status: Any) -> int:
    """The batch's last lines on stderr, and its exit code: 0 only when every input is done."""
    ok = status.done == status.total
    paused = not ok and status.paused > 0 and status.done + status.paused == status.total
    if not args.quiet or not ok:
        word = "done" if ok else "paused" if paused else "failed"
        print(f"{word}: {status.summary()}" + (f" · wrote {args.output}" if args.output else ""), file=sys.stderr)
    if status.paused:
        print(
            f"  {status.paused} kickoff(s) wait for a person's approval: their lines hold the run ids and "
            "output.pending_approvals; `crew approve RUN CALL_ID`, then `crew resume RUN`",
            file=sys.stderr,
        )
    if status.stopped and not ok:
        print(f"  stopped: {status.stopped}", file=sys.stderr)
    return EXIT_OK if ok else EXIT_PAUSED if paused else EXIT_FAILED


def read_inputs(source: Path, project: Any, given: dict[str, Any]) -> list[dict[str, Any]]:
    """Every line's inputs, merged over the defaults; all bad lines reported at once, each by number."""
    from crew.errors import ConfigError

    if not source.is_file():
        raise UsageError(f"--for-each {source}: no such file")
    name = str(source)
    problems: list[str] = []
    inputs: list[dict[str, Any]] = []
    try:
        with source.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except ValueError as exc:
                    problems.append(f"{name}:{number}: not valid JSON: {exc}")
                    continue
                if not isinstance(item, dict):
                    problems.append(
                        f"{name}:{number}: expected a JSON object of inputs "
                        f'(like {{"topic": "bees"}}), got {type(item).__name__}'
                    )
                    continue
                merged = {**project.inputs, **given, **item}
                for problem in project.missing_inputs(merged):
                    problems.append(f"{name}:{number}: {problem.message} (needed at {problem.file}:{problem.line})")
                inputs.append(merged)
    except UnicodeDecodeError as exc:
        raise UsageError(f"--for-each {source}: not UTF-8 text: {exc}") from None
    if problems:
        shown = problems[:_MAX_REPORTED]
        if len(problems) > _MAX_REPORTED:
            shown.append(f"{name}: ... and {len(problems) - _MAX_REPORTED} more bad lines")
        raise ConfigError("\n".join(shown), errors=shown)
    if not inputs:
        raise UsageError(f"--for-each {source}: no inputs (the file has no JSON lines)")
    return inputs


async def _batch(
    crew: Any, inputs: list[dict[str, Any]], backend: Any, args: argparse.Namespace, status: Any, writer: Any, view: Any
) -> None:
    import asyncio
    from contextlib import aclosing

    from crew.backends import for_each

    results = for_each(
        crew,
        inputs,
        backend=backend,
        max_concurrency=args.max_concurrency,
        on_error=args.on_error,
        max_tokens=args.max_tokens,
        max_cost=args.max_cost,
        status=status,
    )

    async def tick() -> None:  # the elapsed time and the running count move between results too
        while True:
            view.show()
            await asyncio.sleep(1.0 if view.live else 5.0)

    ticker = asyncio.ensure_future(tick())
    try:
        async with aclosing(results) as stream:
            async for result in stream:
                writer.write(result)
                view.show()
    finally:
        ticker.cancel()


def _backend(args: argparse.Namespace) -> Any:
    name = args.backend or ("ray" if args.address else "local")
    if name == "local":
        if args.address:
            raise UsageError("--address is for --backend ray")
        from crew.backends import LocalBackend

        return LocalBackend()
    from crew.backends.ray import RayBackend

    return RayBackend(address=args.address, num_cpus=args.num_cpus)


def _shutdown_ray(backend: Any) -> None:
    stop = getattr(backend, "shutdown", None)
    if stop is not None:
        stop()


class _Writer:
    """Writes result lines as they come; ``ordered`` holds early ones until their turn."""

    def __init__(self, out: IO[str], *, ordered: bool) -> None:
        self.out = out
        self.ordered = ordered
        self.held: dict[int, Any] = {}
        self.next = 0

    def write(self, result: Any) -> None:
        if not self.ordered:
            self._line(result)
            return
        self.held[result.index] = result
        while self.next in self.held:
            self._line(self.held.pop(self.next))
            self.next += 1

    def flush_held(self) -> None:
        """On the way out (Ctrl-C): what finished is written, even out of order."""
        for index in sorted(self.held):
            self._line(self.held.pop(index))

    def _line(self, result: Any) -> None:
        self.out.write(json.dumps(result.to_json_line(), ensure_ascii=False, default=str) + "\n")
        self.out.flush()


_LIVE_EVERY = 0.1
"""Seconds between two rewrites of the live line: a batch of thousands finishes hundreds of
kickoffs a second, and a terminal write for each cost more than the kickoff."""


class _View:
    """One status line on stderr: rewritten in place on a terminal (ten times a second at most),
    every few seconds when piped."""

    def __init__(self, status: Any, stream: IO[str] | None) -> None:
        self.status = status
        self.stream = stream
        self.live = stream is not None and stream.isatty() and os.environ.get("TERM") != "dumb"
        self.last = 0.0
        self.started = time.perf_counter()

    def show(self) -> None:
        if self.stream is None:
            return
        now = time.perf_counter()
        if now - self.last < (_LIVE_EVERY if self.live else 5.0):
            return
        self.last = now
        line = f"[{now - self.started:6.1f}s] {self.status.summary()}"
        self.stream.write("\r\x1b[K" + line if self.live else line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.live and self.stream is not None:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
