"""``crew kickoff``: load, check inputs, run with live progress, print the result.

stdout carries the result only (the final answer, or one JSON document with
``--json``); progress, warnings and the summary go to stderr, so
``crew kickoff > plan.md`` and ``crew kickoff --json | jq`` both do the obvious thing.
While the crew runs, whatever else writes to stdout (a tool's ``print``) goes to stderr.

Work that was paid for is never lost: when a run fails or is interrupted, the text of
every task that finished is still printed (or the file it was saved to is named).
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

from crew.cli import EXIT_FAILED, EXIT_OK, UsageError, interrupt_code, interrupt_word


def run(args: argparse.Namespace) -> int:
    from crew.config import load_project
    from crew.errors import ConfigError

    if args.llm is not None and not args.llm.strip():
        raise UsageError("--llm needs a model name (e.g. --llm test, --llm openai/gpt-4o-mini)")
    given = {**_inputs_file(args.inputs_file), **_pairs(args.inputs)}
    if args.out and Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out}: not a folder")
    _batch_flags_need_for_each(args)
    project = load_project(args.path, llm=args.llm, out_dir=args.out, require_model=True)
    for warning in project.warnings:
        print(warning, file=sys.stderr)
    if args.for_each:
        from crew.cli import for_each

        return for_each.run(args, project, given)
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
    else:
        _print_finished(output.tasks_output, _written_files(crew, output))
    sys.stdout.flush()
    _summary(args, crew, inputs, output, error, started, failed)
    return EXIT_FAILED if failed else EXIT_OK


def _batch_flags_need_for_each(args: argparse.Namespace) -> None:
    if args.for_each:
        if args.json:
            raise UsageError("--json is for one kickoff; --for-each writes JSON Lines already")
        return
    for flag, value in (
        ("-o", args.output),
        ("--ordered", args.ordered),
        ("--backend", args.backend),
        ("--address", args.address),
        ("--max-tokens", args.max_tokens),
        ("--max-cost", args.max_cost),
    ):
        if value:
            raise UsageError(f"{flag} is for many kickoffs: add --for-each FILE.jsonl")


def _execute(crew: Any, inputs: dict[str, Any], run_id: str, progress: Any, *, as_json: bool) -> tuple[Any, str | None]:
    """Run on our own asyncio Runner: Ctrl-C cancels the run's tasks, then we say what finished.

    After an interrupt the process leaves at once (``os._exit``) rather than waiting for
    worker threads still inside a blocking tool call; with ``--json`` it still prints its
    one document first: the finished tasks, and status "interrupted".
    """
    import asyncio

    from crew.cli.streams import tool_output_to_stderr
    from crew.errors import CrewRunError

    runner = asyncio.Runner()
    try:
        progress.__enter__()
        try:
            with tool_output_to_stderr():
                output = runner.run(crew.kickoff_async(inputs, run_id=run_id))
            error = None
        except CrewRunError as exc:
            from crew.tasks.output import CrewOutput

            output, error = exc.output or CrewOutput(), str(exc)
        finally:
            progress.close()
    except KeyboardInterrupt:
        summary = progress.summary()
        word = interrupt_word()
        print(f"crew: {word}; {summary}", file=sys.stderr, flush=True)
        finished = progress.finished_outputs()
        if as_json:
            document = {
                "run_id": run_id,
                "status": word,
                "error": f"{word}; {summary}",
                "tasks_output": [o.model_dump(mode="json") for o in finished],
            }
            json.dump(document, sys.stdout, ensure_ascii=False, indent=2, default=str)
            sys.stdout.write("\n")
        else:
            _print_finished(finished, {})
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(interrupt_code())
    runner.close()
    return output, error


def _print_finished(outputs: list[Any], files: dict[str, str]) -> None:
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


def _written_files(crew: Any, output: Any) -> dict[str, str]:
    """Task name -> the output file this run wrote for it (paths that cannot be checked are left out)."""
    out: dict[str, str] = {}
    for name, path in ((t.name, t.output_file) for t in output.tasks_output if t.output_file):
        try:
            if Path(path).is_file():
                out[name] = path
        except (OSError, ValueError):  # a name too long for the file system: nothing was written
            continue
    return out


def _progress(args: argparse.Namespace, crew: Any, run_id: str) -> Any:
    """The progress view; with ``-q`` one that shows nothing but still keeps track."""
    from crew.cli.progress import Progress
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

    from crew.cli.progress import is_terminal
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
    done = {t.name for t in output.tasks_output if t.status == "done"}
    for name, path in _written_files(crew, output).items():
        if name in done:
            print(f"wrote {path}", file=sys.stderr)


def _pairs(items: list[str]) -> dict[str, Any]:
    """``-i key=value`` pairs; a value that parses as JSON (3, true, [1,2]) keeps its type."""
    from crew.config.loader import TooLarge, check_size

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"-i expects KEY=VALUE, got {item!r}")
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = value
        except RecursionError:
            raise UsageError(f"-i {key.strip()}: the value is nested too deeply") from None
        try:
            check_size(parsed)
        except TooLarge as exc:
            raise UsageError(f"-i {key.strip()}: the value is {exc.problem}") from None
        out[key.strip()] = parsed
    return out


def _inputs_file(name: str | None) -> dict[str, Any]:
    """The inputs of ``--inputs-file``, read with the crew files' limits (depth, alias expansion)."""
    if name is None:
        return {}
    from crew.config.build import plain
    from crew.config.loader import YamlSyntaxError, load_data

    path = Path(name)
    if not path.is_file():
        raise UsageError(f"--inputs-file {name}: no such file")
    if path.suffix.lower() not in (".json", ".yaml", ".yml"):
        raise UsageError(f"--inputs-file {name}: expected a .json, .yaml or .yml file")
    try:
        data = load_data(path)
    except YamlSyntaxError as exc:
        raise UsageError(f"{name}:{exc.line}: cannot read the inputs: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--inputs-file {name}: cannot read it: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"--inputs-file {name}: expected a mapping of input names to values")
    return {str(k): plain(v) for k, v in data.items()}
