"""``crew kickoff``: load, check inputs, run with live progress, print the result.

stdout carries the result only (the final answer, or one JSON document with
``--json``); progress, warnings and the summary go to stderr, so
``crew kickoff > plan.md`` and ``crew kickoff --json | jq`` both do the obvious thing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from crew.cli import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, UsageError


def run(args: argparse.Namespace) -> int:
    from crew.config import load_project
    from crew.errors import ConfigError

    given = {**_inputs_file(args.inputs_file), **_pairs(args.inputs)}
    if args.out and Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out}: not a folder")
    project = load_project(args.path, llm=args.llm, out_dir=args.out, require_model=True)
    for warning in project.warnings:
        print(warning, file=sys.stderr)
    inputs = {**project.inputs, **given}
    missing = project.missing_inputs(inputs)
    if missing:
        lines = [str(p) for p in missing]
        raise ConfigError("\n".join(lines), errors=lines)

    crew = project.crew
    run_id = uuid.uuid4().hex
    progress = _progress(args, crew, run_id)
    if crew.human_feedback is None and any(t.human_input for t in crew.tasks):
        crew.human_feedback = _human_prompt(progress)
    started = time.time()
    output, error = _execute(crew, inputs, run_id, progress, as_json=args.json)
    failed = error is not None or any(t.status == "failed" for t in output.tasks_output)

    if args.json:
        document = output.model_dump(mode="json")
        document["status"] = "failed" if failed else "done"
        document["error"] = error
        document["duration"] = round((output.finished_at or time.time()) - started, 6)
        json.dump(document, sys.stdout, ensure_ascii=False, indent=2, default=str)
        sys.stdout.write("\n")
    elif not failed:
        sys.stdout.write(str(output).rstrip("\n") + "\n")
    sys.stdout.flush()
    _summary(args, crew, inputs, output, error, started, failed)
    return EXIT_FAILED if failed else EXIT_OK


def _execute(crew: Any, inputs: dict[str, Any], run_id: str, progress: Any, *, as_json: bool) -> tuple[Any, str | None]:
    """Run on our own asyncio Runner: Ctrl-C cancels the run's tasks, then we say what finished.

    After an interrupt the process leaves at once (``os._exit``) rather than waiting for
    worker threads still inside a blocking tool call; with ``--json`` it still prints its
    one document first: the finished tasks, and status "interrupted".
    """
    import asyncio

    from crew.errors import CrewRunError

    runner = asyncio.Runner()
    try:
        progress.__enter__()
        try:
            output = runner.run(crew.kickoff_async(inputs, run_id=run_id))
            error = None
        except CrewRunError as exc:
            from crew.tasks.output import CrewOutput

            output, error = exc.output or CrewOutput(), str(exc)
        finally:
            progress.close()
    except KeyboardInterrupt:
        summary = progress.summary()
        print(f"crew: interrupted; {summary}", file=sys.stderr, flush=True)
        if as_json:
            finished = progress.finished_outputs()
            document = {
                "run_id": run_id,
                "status": "interrupted",
                "error": f"interrupted; {summary}",
                "tasks_output": [o.model_dump(mode="json") for o in finished],
            }
            json.dump(document, sys.stdout, ensure_ascii=False, indent=2, default=str)
            sys.stdout.write("\n")
        sys.stdout.flush()
        os._exit(EXIT_INTERRUPTED)
    runner.close()
    return output, error


def _progress(args: argparse.Namespace, crew: Any, run_id: str) -> Any:
    """The progress view; with ``-q`` one that shows nothing but still keeps track."""
    from crew.progress import Progress
    from crew.tasks.graph import task_names

    names = task_names(crew.tasks)
    tasks = [(name, _agent_label(task)) for name, task in zip(names, crew.tasks, strict=True)]
    live = sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
    title = f"{crew.name} ({crew.process.value if hasattr(crew.process, 'value') else crew.process})"
    return Progress(
        None if args.quiet else sys.stderr,
        run_id=run_id,
        title=title,
        tasks=tasks,
        live=live,
        color=not os.environ.get("NO_COLOR"),
    )


def _human_prompt(progress: Any) -> Any:
    """Ask about ``human_input`` tasks on the terminal, keeping stdout for the result.

    The prompt goes where the person is looking: to stderr when stdout is a pipe or a
    file (``crew kickoff > out.md`` must not swallow it), and the live block steps aside
    until the answer is in. Prompts take turns.
    """
    import asyncio
    import contextlib

    from crew.progress import is_terminal
    from crew.task_runner import terminal_feedback

    terminal = sys.stderr  # the real one: the live view reroutes sys.stderr while it runs
    turns: list[asyncio.Lock] = []

    async def feedback(output: Any) -> str:
        if not turns:
            turns.append(asyncio.Lock())
        async with turns[0]:
            with progress.paused(), contextlib.ExitStack() as stack:
                if not is_terminal(sys.stdout):
                    stack.enter_context(contextlib.redirect_stdout(terminal))
                return await terminal_feedback(output)

    return feedback


def _agent_label(task: Any) -> str:
    agent = task.agent
    return "" if agent is None else str(getattr(agent, "name", None) or getattr(agent, "role", ""))


def _summary(
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
    from crew.tasks.interpolate import fill

    counts: dict[str, int] = {}
    for task in output.tasks_output:
        counts[task.status] = counts.get(task.status, 0) + 1
    spent = (output.finished_at or time.time()) - started
    parts = [", ".join(f"{n} {s}" for s, n in counts.items()), f"{spent:.2f}s", f"{output.usage.total_tokens:,} tokens"]
    if output.usage.cost:
        parts.append(f"${output.usage.cost:.4f}")
    print(("failed: " if failed else "done: ") + " · ".join(parts), file=sys.stderr)
    for task in output.tasks_output:
        if task.status == "failed":
            print(f"  task '{task.name}' failed: {task.error}", file=sys.stderr)
    for task in crew.tasks:
        if task.output_file:
            path = fill(task.output_file, inputs, where="output_file", errors=[])
            if Path(path).is_file():
                print(f"wrote {path}", file=sys.stderr)


def _pairs(items: list[str]) -> dict[str, Any]:
    """``-i key=value`` pairs; a value that parses as JSON (3, true, [1,2]) keeps its type."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"-i expects KEY=VALUE, got {item!r}")
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value
    return out


def _inputs_file(name: str | None) -> dict[str, Any]:
    if name is None:
        return {}
    path = Path(name)
    if not path.is_file():
        raise UsageError(f"--inputs-file {name}: no such file")
    suffix = path.suffix.lower()
    if suffix not in (".json", ".yaml", ".yml"):
        raise UsageError(f"--inputs-file {name}: expected a .json, .yaml or .yml file")
    try:
        text = path.read_text(encoding="utf-8")
        if suffix == ".json":
            data = json.loads(text)
        else:
            import yaml

            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise ValueError(str(exc)) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"--inputs-file {name}: cannot parse it: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"--inputs-file {name}: expected a mapping of input names to values")
    return {str(k): v for k, v in data.items()}
