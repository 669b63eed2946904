"""What ``crew kickoff`` prints when a run ends: the answer or one JSON document on stdout, a
summary on stderr, and after a failure or a pause the text of every task that finished (work
that was paid for is never lost)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any


def print_result(
    args: argparse.Namespace, crew: Any, output: Any, error: str | None, *, started: float, failed: bool
) -> None:
    """stdout: the answer; or one JSON document; or, after a failure or a pause, what finished."""
    if getattr(args, "stream", False):
        if args.json and error is not None:  # the stream broke off at the failure: its last line says so, and why
            document = {"type": "output", "status": "failed", "error": error}
            document["output"] = output.model_dump(mode="json")
            sys.stdout.write(json.dumps(document, ensure_ascii=False, default=str) + "\n")
    elif args.json:
        print_json(output, error, started=started, failed=failed)
    elif failed or output.status == "paused":
        print_finished(output.tasks_output, written_files(crew, output))
    else:
        sys.stdout.write(str(output).rstrip("\n") + "\n")
    sys.stdout.flush()


def print_json(output: Any, error: str | None, *, started: float, failed: bool) -> None:
    document = output.model_dump(mode="json")
    document["status"] = "failed" if failed else "paused" if output.status == "paused" else "done"
    if error is None and failed:  # on_error: continue: the run returned, its failed tasks say why
        error = failures(output)
    document["error"] = error
    document["duration"] = round((output.finished_at or time.time()) - started, 6)
    json.dump(document, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")


def failures(output: Any) -> str:
    return "; ".join(f"task '{t.name}' failed: {t.error}" for t in output.tasks_output if t.status == "failed")


def print_finished(outputs: list[Any], files: dict[str, str]) -> None:
    """The text of each task that finished, under its name (on stdout: it is the result there is).

    A task whose output was written to a file is named with its path instead of repeated.
    """
    done = [o for o in outputs if getattr(o, "status", "done") == "done"]
    for out in done:
        if out.name in files:
            print(f"task '{out.name}' finished; its output is in {files[out.name]}", file=sys.stderr)
            continue
        sys.stdout.write(f"## {out.name}\n\n{str(out.raw).rstrip(chr(10))}\n\n")
    if done:
        print(f"crew: printed what finished: {', '.join(o.name for o in done)}", file=sys.stderr)


def written_files(crew: Any, output: Any) -> dict[str, str]:
    """Task name -> the output file this run wrote for it (paths that cannot be checked are left out)."""
    out: dict[str, str] = {}
    for name, path in ((t.name, t.output_file) for t in output.tasks_output if t.output_file):
        try:
            if Path(path).is_file():
                out[name] = path
        except (OSError, ValueError):  # a name too long for the file system: nothing was written
            continue
    return out


def print_summary(
    args: argparse.Namespace,
    crew: Any,
    inputs: dict[str, Any],
    output: Any,
    error: str | None,
    started: float,
    failed: bool,
) -> None:
    if args.quiet:
        if error:
            print(f"crew: {error}", file=sys.stderr)
        return
    counts: dict[str, int] = {}
    for task in output.tasks_output:
        counts[task.status] = counts.get(task.status, 0) + 1
    spent = (output.finished_at or time.time()) - started
    parts = [", ".join(f"{n} {s}" for s, n in counts.items()), f"{spent:.2f}s", f"{output.usage.total_tokens:,} tokens"]
    if output.usage.cost:
        parts.append(f"${output.usage.cost:.4f}")
    word = "failed" if failed else "paused" if output.status == "paused" else "done"
    print(f"{word}: " + " · ".join(parts), file=sys.stderr)
    for task in output.tasks_output:
        if task.status == "failed":
            print(f"  task '{task.name}' failed: {task.error}", file=sys.stderr)
    done = {t.name for t in output.tasks_output if t.status == "done"}
    for name, path in written_files(crew, output).items():
        if name in done:
            print(f"wrote {path}", file=sys.stderr)
