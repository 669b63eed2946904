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
    given = {**_inputs_file(args.inputs_file), **_pairs(args.inputs)}
    project, inputs = load(args.path, given, llm=args.llm, out=args.out)
    crew = project.crew
    apply_budgets(crew, args)
    store = None if args.no_store else open_store(args.store, project.folder)
    settings = {"llm": args.llm, "out": args.out}

    def start(run_id: str) -> Any:
        if store is None:
            return crew.kickoff_async(inputs, run_id=run_id)
        from crew.store.recording import recorded_kickoff

        folder = str(project.folder.resolve())
        return recorded_kickoff(crew, store, inputs, run_id=run_id, settings=settings, folder=folder)

    return execute(args, crew, inputs, start)


def load(path: str | Path, given: dict[str, Any], *, llm: str | None, out: str | None) -> tuple[Any, dict[str, Any]]:
    """The crew folder's project and the run's inputs (its defaults under ``given``), checked."""
    from crew.config import load_project
    from crew.errors import ConfigError

    if out and Path(out).exists() and not Path(out).is_dir():
        raise UsageError(f"--out {out}: not a folder")
    project = load_project(path, llm=llm, out_dir=out, require_model=True)
    for warning in project.warnings:
        print(warning, file=sys.stderr)
    from crew.events import remember_secrets
    from crew.store.scrub import scrubber_for

    remember_secrets(scrubber_for(project.crew).secrets)  # masked in events and logs, stored or not
    inputs = {**project.inputs, **given}
    missing = project.missing_inputs(inputs)
    if missing:
        lines = [str(p) for p in missing]
        raise ConfigError("\n".join(lines), errors=lines)
    return project, inputs


def apply_budgets(crew: Any, args: argparse.Namespace) -> None:
    for name in ("max_tokens", "max_cost"):
        value = getattr(args, name, None)
        if value is not None:
            if value <= 0:
                raise UsageError(f"--{name.replace('_', '-')} must be positive, got {value}")
            setattr(crew, name, value)


def open_store(given: str | None, folder: Path) -> Any:
    """The CLI's run store: ``--store FILE``, else ``.crew/runs.db`` in the crew folder."""
    from crew.store import RunStore

    path = Path(given) if given else folder / ".crew" / "runs.db"
    if not given and not path.parent.exists():
        try:
            path.parent.mkdir(parents=True)
            (path.parent / ".gitignore").write_text("# crew's run store: local, never committed\n*\n")
        except OSError:
            pass  # RunStore says what is wrong with the place
    return RunStore(path)


def execute(args: argparse.Namespace, crew: Any, inputs: dict[str, Any], start: Any, names: Any = None) -> int:
    """Run ``start(run_id)`` (a kickoff coroutine) with progress, then print the result and the summary."""
    run_id = uuid.uuid4().hex
    progress = _progress(args, crew, run_id, names)
    if crew.human_feedback is None and any(t.human_input for t in crew.tasks):
        crew.human_feedback = _human_prompt(progress)
    started = time.time()
    output, error = _execute(lambda: start(run_id), run_id, progress, as_json=args.json)
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


def _execute(start: Any, run_id: str, progress: Any, *, as_json: bool) -> tuple[Any, str | None]:
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
            output = runner.run(start())
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


def _progress(args: argparse.Namespace, crew: Any, run_id: str, only: Any = None) -> Any:
    """The progress view (of the tasks in ``only``, when given); with ``-q`` one that shows nothing."""
    from crew.progress import Progress
    from crew.tasks.graph import task_names

    names = task_names(crew.tasks)
    tasks = [
        (name, _agent_label(task)) for name, task in zip(names, crew.tasks, strict=True) if only is None or name in only
    ]
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
