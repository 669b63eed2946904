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

from crew.cli import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_PAUSED,
    UsageError,
    interrupt_code,
    interrupt_word,
    llm_option,
    preflight,
)
from crew.cli.budgets import apply_budgets
from crew.cli.inputs import input_pairs, inputs_file
from crew.cli.ray_local import stop_ray
from crew.cli.results import print_finished, print_result, print_summary
from crew.cli.verbose import route_verbose


def run(args: argparse.Namespace) -> int:
    from_file, pairs = inputs_file(args.inputs_file), input_pairs(args.inputs)
    given = {**from_file, **pairs}
    origins = {**{k: f"--inputs-file {args.inputs_file}" for k in from_file}, **{k: "-i" for k in pairs}}
    _batch_flags_need_for_each(args)
    flow = None if args.for_each else _flow(args.path)
    if flow is not None:
        from crew.cli import flow_kickoff

        def prepare(crew: Any, inputs: dict[str, Any]) -> None:
            apply_transport(crew, getattr(args, "transport", None))
            _offline(crew, inputs, live_tools=args.live_tools)

        store = None if args.no_store else open_store(args.store, flow.folder)
        return flow_kickoff.run(args, flow, given, prepare, store)
    if args.for_each:
        from crew.cli import for_each

        project = _project(args.path, llm=args.llm, out=args.out)
        _offline(project.crew, project.inputs, live_tools=args.live_tools)
        preflight.check(project.crew, {**project.inputs, **given}, origins)
        route_verbose(project.crew, None, quiet=args.quiet)  # the batch's view is one status line
        if not args.no_store:  # each kickoff of the batch is a run, recorded here (whatever backend ran it)
            project.crew.store = open_store(args.store, project.folder)
        return for_each.run(args, project, given)
    project, inputs = load(args.path, given, llm=args.llm, out=args.out, live_tools=args.live_tools)
    crew = project.crew
    preflight.check(crew, inputs, origins)
    apply_budgets(crew, args)
    apply_transport(crew, getattr(args, "transport", None))
    if not args.quiet:
        _say_text_protocol(crew)
    store = None if args.no_store else open_store(args.store, project.folder)
    settings = {"llm": args.llm, "out": args.out, "live_tools": args.live_tools}  # a resumed run keeps them

    def start(run_id: str) -> Any:
        if store is None:
            return crew.kickoff_async(inputs, run_id=run_id)
        from crew.run.kickoff import kickoff

        folder = str(project.folder.resolve())
        return kickoff(crew, inputs, run_id=run_id, store=store, settings=settings, folder=folder)

    return execute(args, crew, inputs, start)


def _flow(path: str) -> Any:
    """The flow at ``path`` (a CrewAI flow project, a folder with flow.py, ``FILE.py:Class``); None for a crew."""
    from crew.config.flow_project import find_flow

    return find_flow(path)


def load(
    path: str | Path, given: dict[str, Any], *, llm: str | None, out: str | None, live_tools: bool = False
) -> tuple[Any, dict[str, Any]]:
    """The crew folder's project and the run's inputs (its defaults under ``given``), checked.

    Agents on the test model get one that knows the inputs, and stand-ins for their tools
    unless ``live_tools`` (``crew.config.dry_run``): offline must mean no tool touches the world.
    """
    from crew.errors import ConfigError

    project = _project(path, llm=llm, out=out)
    inputs = {**project.inputs, **given}
    missing = project.missing_inputs(inputs)
    if missing:
        lines = [str(p) for p in missing]
        raise ConfigError("\n".join(lines), errors=lines)
    _offline(project.crew, inputs, live_tools=live_tools)
    return project, inputs


def _offline(crew: Any, inputs: dict[str, Any], *, live_tools: bool) -> None:
    """The test model's run made safe (``crew.config.dry_run``); a crew on other models is left as it is."""
    from crew.config.dry_run import offline as prepare

    prepare(crew, inputs, live_tools=live_tools)


def _project(path: str | Path, *, llm: str | None, out: str | None) -> Any:
    from crew.cli import load_project

    llm = llm_option(llm)
    if out:
        out_folder(out)
    project = load_project(path, llm=llm, out_dir=out, require_model=True)
    for warning in project.warnings:
        print(warning, file=sys.stderr)
    if project.env_note is not None:
        print(project.env_note, file=sys.stderr)
    from crew.store.scrub import scrubber_for

    scrubber_for(project.crew)  # the crew's keys are masked in everything from here on, stored or not
    return project


def out_folder(out: str) -> None:
    """``--out DIR`` made (when missing) and checked writable before anything loads or runs.

    The output files are written as their tasks finish: a folder that cannot take them
    would fail the run only after every task before was paid for.
    """
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--out {out}: not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot create the folder: {exc.strerror or exc}") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out}: cannot write in the folder: permission denied")


def apply_transport(crew: Any, transport: str | None) -> None:
    """``--transport``: every model of the crew (its LLMs and model strings; not ``test`` or
    another ChatModel, which have no door) takes that door."""
    if transport is None:
        return
    from crew.models import LLM

    def moved(spec: Any) -> Any:
        if isinstance(spec, str) and spec.strip().lower() != "test":
            return LLM(spec.strip(), transport=transport)
        return spec.model_copy(update={"transport": transport}) if isinstance(spec, LLM) else spec

    crew.llm, crew.manager_llm = moved(crew.llm), moved(crew.manager_llm)
    for agent in crew.all_agents():
        agent.llm, agent.function_calling_llm = moved(agent.llm), moved(agent.function_calling_llm)


def store_path(given: str | None, folder: str | Path) -> tuple[Path, bool]:
    """The CLI's run store, and whether it is the crew folder's own: ``--store FILE``, else
    ``$CREW_STORE``, else ``.crew/runs.db`` in the crew folder."""
    chosen = given or os.environ.get("CREW_STORE", "").strip()
    return (Path(chosen), False) if chosen else (Path(folder) / ".crew" / "runs.db", True)


def open_store(given: str | None, folder: Path) -> Any:
    from crew.store import RunStore

    path, own = store_path(given, folder)
    if own and not path.parent.exists():
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
    route_verbose(crew, progress, quiet=args.quiet)
    _ask_people(crew, progress)
    started = time.time()
    output, error = _execute(
        lambda: start(run_id), run_id, progress, as_json=args.json, stream=getattr(args, "stream", False)
    )
    from crew.cli.output import report_store_loss

    report_store_loss(run_id)
    failed = error is not None or any(t.status == "failed" for t in output.tasks_output)
    paused = output.status == "paused" and not failed
    print_result(args, crew, output, error, started=started, failed=failed)
    print_summary(args, crew, inputs, output, error, started, failed)
    if paused:
        from crew.cli.approve import print_paused

        print_paused(output)
        return EXIT_PAUSED
    return EXIT_FAILED if failed else EXIT_OK


def _ask_people(crew: Any, progress: Any) -> None:
    """``human_input`` tasks and tool approvals ask on this terminal, unless the crew has its own ways."""
    if crew.human_feedback is None and any(t.human_input for t in crew.tasks):
        crew.human_feedback = _human_prompt(progress)
    if crew.approver is None and sys.stdin is not None and sys.stdin.isatty():
        from crew.cli.approve import terminal_approver

        crew.approver = terminal_approver(progress)  # a person is here: ask instead of pausing


def _batch_flags_need_for_each(args: argparse.Namespace) -> None:
    if args.for_each:
        for flag, value in (("--json", args.json), ("--stream", getattr(args, "stream", False))):
            if value:
                raise UsageError(f"{flag} is for one kickoff; --for-each writes JSON Lines already")
        return
    for flag, value in (
        ("-o", args.output),
        ("--ordered", args.ordered),
        ("--backend", args.backend),
        ("--address", args.address),
    ):
        if value:
            raise UsageError(f"{flag} is for many kickoffs: add --for-each FILE.jsonl")


def _execute(start: Any, run_id: str, progress: Any, *, as_json: bool, stream: bool = False) -> tuple[Any, str | None]:
    """Run on our own asyncio Runner: Ctrl-C cancels the run's tasks, then we say what finished.

    After an interrupt the process leaves at once (``os._exit``) rather than waiting for
    worker threads still inside a blocking tool call; with ``--json`` it still prints its
    one document first: the finished tasks, and status "interrupted".
    """
    import asyncio

    from crew.cli import interruptible
    from crew.cli.output import tool_output_to_stderr
    from crew.errors import CrewRunError

    runner = asyncio.Runner()
    try:
        progress.__enter__()
        try:
            if stream:
                from crew.cli.kickoff_stream import print_stream
                from crew.cli.output import result_stream
                from crew.stream.drive import stream_run

                with result_stream() as out, tool_output_to_stderr():  # tools' prints go to stderr, the stream not
                    output = runner.run(
                        interruptible(print_stream(stream_run(run_id, start), as_json=as_json, out=out))
                    )
            else:
                with tool_output_to_stderr():
                    output = runner.run(interruptible(start()))
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
            if stream:  # the last of the JSON Lines, typed as the stream's own last line is
                document = {"type": "output", **document}
            json.dump(document, sys.stdout, ensure_ascii=False, indent=None if stream else 2, default=str)
            sys.stdout.write("\n")
        else:
            print_finished(finished, {})
        sys.stdout.flush()
        sys.stderr.flush()
        stop_ray()
        os._exit(interrupt_code())
    runner.close()
    stop_ray()
    return output, error


def _progress(args: argparse.Namespace, crew: Any, run_id: str, only: Any = None) -> Any:
    """The progress view (of the tasks in ``only``, when given); with ``-q`` one that shows nothing."""
    from crew.cli.progress import Progress
    from crew.tasks.graph import task_names

    names = task_names(crew.tasks)
    tasks = [
        (name, _agent_label(task)) for name, task in zip(names, crew.tasks, strict=True) if only is None or name in only
    ]
    live = sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
    title = f"{crew.name} ({crew.process.value if hasattr(crew.process, 'value') else crew.process})"
    return Progress(
        None if args.quiet or getattr(args, "stream", False) else sys.stderr,  # with --stream the text is the view
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
    from crew.run.task_runner import terminal_feedback

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


def _say_text_protocol(crew: Any) -> None:
    """Name, before the run, the agents whose model is not known to call functions.

    They speak the text protocol (tool descriptions in the prompt, replies parsed): a user
    who expected native tool calls should learn it here, not from the answers.
    """
    from crew.agent.modes import protocol_of
    from crew.errors import ConfigError

    roles = []
    for agent in crew.all_agents():
        try:
            if protocol_of(agent.chat_model(crew.llm)) == "text":
                roles.append(agent.role)
        except ConfigError:
            continue
    if roles:
        print(
            f"protocol: text for {', '.join(roles)} (the model is not known to call functions: its tool "
            "descriptions go in the prompt; tool calls it returns still run)",
            file=sys.stderr,
        )
