"""The ``crew`` command.

argparse, not click or typer: ``crew --help`` must answer in well under 0.3 s, and
each subcommand imports what it needs only when it runs. Exit codes: 0 success, 1 the
run failed (a task failed, or something unexpected broke), 2 a usage or configuration
error, printed as one clear message without a traceback (``--debug`` shows it), 130 an
interrupt (Ctrl-C), 143 a termination (SIGTERM: ``docker stop``, a CI cancel), which is
handled exactly like Ctrl-C. Everything the command prints is scrubbed of the secrets the
process knows (:mod:`crew.common.secrets`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Coroutine, Sequence
from typing import IO, Any, TypeVar

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143
EXIT_PAUSED = 3
"""A run paused: tool calls wait for a person's approval (`crew approve`, then `crew resume`)."""

_signalled: dict[str, bool] = {"terminated": False}

T = TypeVar("T")


def interrupt_code() -> int:
    """The exit code of an interrupted command: 143 after SIGTERM, else 130 (Ctrl-C)."""
    return EXIT_TERMINATED if _signalled["terminated"] else EXIT_INTERRUPTED


def interrupt_word() -> str:
    return "terminated" if _signalled["terminated"] else "interrupted"


def _on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM takes the Ctrl-C path (asyncio's runner cancels the run, we say what finished)."""
    import signal

    _signalled["terminated"] = True
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.raise_signal(signal.SIGINT)
        return
    # Started with Ctrl-C ignored (a background job of a script, some process managers):
    # asyncio's runner then handles no SIGINT, and a raised one would be ignored too. Cancel
    # the run's main task as that runner would; outside a run, interrupt as Python's own
    # Ctrl-C handler does.
    main = _running.get("main")
    if main is None:
        raise KeyboardInterrupt
    task, loop = main
    loop.call_soon_threadsafe(task.cancel)


_running: dict[str, Any] = {}


async def interruptible(coro: Coroutine[Any, Any, T]) -> T:
    """Run the command's main coroutine so that SIGTERM stops it even when Ctrl-C is ignored.

    ``asyncio.Runner.run(interruptible(main()))``: a cancellation that SIGTERM asked for ends
    as ``KeyboardInterrupt``, the way asyncio's runner ends a Ctrl-C.
    """
    import asyncio

    task = asyncio.current_task()
    _running["main"] = (task, asyncio.get_running_loop())
    try:
        return await coro
    except asyncio.CancelledError:
        if _signalled["terminated"]:
            raise KeyboardInterrupt from None
        raise
    finally:
        _running.pop("main", None)


def _handle_sigterm() -> object:
    """Install the SIGTERM handler (main thread only); returns the previous one, to restore."""
    import signal
    import threading

    _signalled["terminated"] = False
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _on_sigterm)


class UsageError(Exception):
    """The command line itself is wrong (bad -i syntax, unknown -o suffix ...): exit 2."""


def build_parser() -> argparse.ArgumentParser:
    from crew import __version__

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show the traceback of errors")
    common.add_argument(
        "--log-level",
        metavar="LEVEL",
        default=argparse.SUPPRESS,
        help="log crew's events at LEVEL (debug, info, warning, error) on stderr",
    )
    common.add_argument(
        "--log-json", action="store_true", default=argparse.SUPPRESS, help="log events as JSON lines (level: info)"
    )
    parser = argparse.ArgumentParser(
        prog="crew",
        description="Run and inspect crews of LLM agents declared in YAML.",
        epilog="Try it offline: crew kickoff examples/trip_planner --llm test",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"crew {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help, parents=[common])

    path_help = (
        "crew folder (crew.yaml, or agents.yaml + tasks.yaml), or a CrewAI project (its root, package folder, "
        "a flow's crew folder or config folder); default: the current folder"
    )
    p = command("kickoff", "run a crew and show its progress")
    p.add_argument("path", nargs="?", default=".", metavar="PATH", help=path_help)
    _input_option(p, "an input for {placeholders} (repeatable); VALUE is read as JSON when it parses, else text")
    p.add_argument("--inputs-file", metavar="FILE", help="inputs from a .json, .yaml or .yml file")
    p.add_argument("--llm", metavar="MODEL", help="use this model for every agent (e.g. test, openai/gpt-4o-mini)")
    p.add_argument(
        "--live-tools",
        action="store_true",
        help="let the test model really call the tools (default: they do not run; each call gets a stand-in result)",
    )
    p.add_argument("--json", action="store_true", help="print the whole result as one JSON document")
    _stream_option(p)
    p.add_argument("--out", metavar="DIR", help="folder for relative output_file paths (default: current folder)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    batch = p.add_argument_group("many kickoffs (--for-each)")
    batch.add_argument(
        "--for-each", metavar="FILE", help="one kickoff per line of FILE (JSON Lines, an object of inputs)"
    )
    batch.add_argument("-o", "--output", metavar="FILE", help="write the JSON Lines results to FILE (default: stdout)")
    batch.add_argument("--ordered", action="store_true", help="write results in input order (default: as they finish)")
    batch.add_argument(
        "--on-error", choices=["continue", "stop"], default="continue", help="after a failed input (default: continue)"
    )
    batch.add_argument("--max-concurrency", type=int, default=4, metavar="N", help="kickoffs at once (default: 4)")
    batch.add_argument("--backend", choices=["local", "ray"], help="where kickoffs run (default: local)")
    batch.add_argument(
        "--address", metavar="ADDR", help="Ray cluster to connect to (default: $RAY_ADDRESS, else start one here)"
    )
    batch.add_argument("--num-cpus", type=int, metavar="N", help="CPUs of a Ray instance started here")
    _run_options(p)
    p.set_defaults(handler="crew.cli.kickoff:run")

    run_help = "a run id or its first characters (`crew runs` lists them)"
    p = command("runs", "list the recorded runs of a crew folder, newest first")
    p.add_argument("path", nargs="?", default=None, metavar="PATH", help=path_help)
    p.add_argument("--store", metavar="FILE", help="the run store (default: PATH/.crew/runs.db)")
    p.add_argument("-n", "--limit", type=int, default=20, metavar="N", help="show the N newest runs (default 20)")
    p.add_argument("--json", action="store_true", help="print the runs as JSON")
    p.set_defaults(handler="crew.cli.runs:list_runs")

    p = command("show", "show one run: every task, its output, usage, model and tool calls")
    p.add_argument("run", nargs="?", default=None, metavar="RUN", help=run_help + "; default: the latest run")
    _store_options(p)
    p.add_argument("--json", action="store_true", help="print everything recorded about the run as JSON")
    p.add_argument("-o", "--output", metavar="FILE.html", help="write the run's timeline as a self-contained page")
    p.set_defaults(handler="crew.cli.runs:show")

    for name, help_text in (
        ("replay", "rerun a task of a recorded run and everything downstream of it"),
        ("resume", "continue an interrupted, failed or paused run, running only the unfinished tasks"),
    ):
        p = command(name, help_text)
        default = "" if name == "replay" else "; default: the latest unfinished run"
        p.add_argument(
            "run", nargs="?" if name == "resume" else None, default=None, metavar="RUN", help=run_help + default
        )
        if name == "replay":
            p.add_argument("--from", dest="from_task", required=True, metavar="TASK", help="the task to rerun first")
        _store_options(p)
        _input_option(p, "change an input of the run (repeatable)")
        p.add_argument("--llm", metavar="MODEL", help="use this model for every agent (default: the run's)")
        p.add_argument("--json", action="store_true", help="print the whole result as one JSON document")
        _stream_option(p)
        p.add_argument("--out", metavar="DIR", help="folder for relative output_file paths (default: the run's)")
        p.add_argument("-q", "--quiet", action="store_true", help="no progress display")
        _budget_options(p)
        p.set_defaults(handler=f"crew.cli.runs:{name}")

    p = command("approve", "decide a tool call a paused run waits on (then `crew resume RUN` continues it)")
    p.add_argument("run", metavar="RUN", help=run_help)
    p.add_argument("call_id", metavar="CALL_ID", help="the waiting call's id (the paused kickoff printed it)")
    p.add_argument(
        "--task", metavar="TASK", help="the call's task, when calls of several tasks share its id (the kickoff says so)"
    )
    p.add_argument("--deny", metavar="REASON", help="deny the call; the model reads 'denied by a person: REASON'")
    p.add_argument("--args", metavar="JSON", help="approve it with these arguments instead of the model's")
    _store_options(p)
    p.set_defaults(handler="crew.cli.runs:approve")

    p = command("validate", "check a crew without running it (no model or key needed)")
    p.epilog = (
        "validate imports the crew's own modules (tools.py and any import path in crew.yaml), which runs "
        "their code, as kickoff, plot and tools do. For a folder you do not trust, use --no-import."
    )
    p.add_argument("path", nargs="?", default=".", metavar="PATH", help=path_help)
    p.add_argument(
        "--no-import",
        action="store_true",
        help="run none of the folder's code: check the YAML, names and import paths (syntax, modules) only",
    )
    p.add_argument(
        "--check-servers", action="store_true", help="also start each MCP server and report start-up failures"
    )
    p.add_argument(
        "--llm", metavar="MODEL", help="check with this model for every agent, as `kickoff --llm MODEL` would run"
    )
    p.set_defaults(handler="crew.cli.inspect:validate")

    p = command("plot", "draw the task graph (Mermaid on stdout by default)")
    p.add_argument("path", nargs="?", default=".", metavar="PATH", help=path_help)
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE: .mmd/.mermaid/.md (Mermaid), .dot/.gv (Graphviz), .html (a page)",
    )
    p.set_defaults(handler="crew.cli.plot:run")

    p = command("tools", "list each tool with its description and arguments")
    p.add_argument("path", nargs="?", default=".", metavar="PATH", help=path_help)
    p.add_argument("--json", action="store_true", help="print the tools as JSON (OpenAI function format)")
    p.set_defaults(handler="crew.cli.inspect:tools")

    p = command("create", "make a new crew folder that runs at once (offline with the test model)")
    p.add_argument("name", metavar="NAME", help="name of the folder to create")
    p.set_defaults(handler="crew.cli.scaffold:run")

    p = command("migrate", "write a CrewAI project as a native crew folder (crew.yaml + tools.py)")
    p.add_argument(
        "path", nargs="?", default=".", metavar="PATH", help="the CrewAI project; default: the current folder"
    )
    p.add_argument("-o", "--output", metavar="DIR", help="folder to write (default: crew_native/ in the project)")
    p.set_defaults(handler="crew.cli.migrate:run")

    p = command("schema", "print the JSON Schema of crew.yaml (for editors)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(handler="crew.cli.inspect:schema")
    return parser


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--store", metavar="FILE", help="record the run in FILE (default: $CREW_STORE, else PATH/.crew/runs.db)"
    )
    p.add_argument("--no-store", action="store_true", help="do not record the run")
    _budget_options(p)


def _input_option(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("-i", "--input", dest="inputs", action="append", default=[], metavar="KEY=VALUE", help=help)


def _budget_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-tokens",
        type=int,
        metavar="N",
        help="budget: stop before a model call once the run spent N tokens (--for-each: the whole batch)",
    )
    p.add_argument(
        "--max-cost",
        type=float,
        metavar="USD",
        help="budget: stop before a model call once the run cost USD (--for-each: the whole batch)",
    )


def _stream_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--stream",
        action="store_true",
        help="print the models' text as it arrives (with --json: one JSON event per line, JSON Lines)",
    )


def _store_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--path", default=None, metavar="PATH", help="the crew folder (default: the run's, or .)")
    p.add_argument("--store", metavar="FILE", help="the run store (default: PATH/.crew/runs.db)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    debug = getattr(args, "debug", False)
    level = getattr(args, "log_level", None) or ("info" if getattr(args, "log_json", False) else None)
    if level is not None:
        from crew.common.events import configure_logging

        try:
            configure_logging(level, json=getattr(args, "log_json", False))
        except ValueError as exc:
            _say(f"crew: --log-level: {exc}")
            return EXIT_USAGE
    from crew.cli.output import scrubbed_streams
    from crew.common.secrets import register_environment

    register_environment()
    previous = _handle_sigterm()
    try:
        with scrubbed_streams():
            return _dispatch(args, debug)
    finally:
        if previous is not None:
            import signal

            signal.signal(signal.SIGTERM, previous)  # type: ignore[arg-type]


def _dispatch(args: argparse.Namespace, debug: bool) -> int:
    try:
        module, _, name = args.handler.partition(":")
        from importlib import import_module

        return int(getattr(import_module(module), name)(args))
    except KeyboardInterrupt:
        _say(f"crew: {interrupt_word()}")
        return interrupt_code()
    except BrokenPipeError:  # `crew plot | head`: the reader left; that is not an error
        _silence_stdout()
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the one place errors become messages and exit codes
        return _report(exc, debug)


def write_file(path: str, text: str, *, option: str = "-o") -> None:
    """Write a file the user named on the command line: its folder is created; failures are usage errors.

    Every command that writes a file goes through here (or ``open_output``), so a missing
    folder, a name too long or a read-only place gives one clear message naming the option
    and the path.
    """
    from crew.common.secrets import scrub

    with open_output(path, option=option) as handle:
        try:
            handle.write(scrub(text))
        except OSError as exc:  # a full disk: the place was fine, the write was not
            raise UsageError(f"{option} {path}: cannot write it: {exc.strerror or exc}") from None


def open_output(path: str, *, option: str = "-o") -> IO[str]:
    """Open a file named on the command line for writing, its folder created first.

    Called before any work starts (``--for-each -o``), so a path that cannot be written is
    a usage error (exit 2) at once, not an unexpected error after every kickoff was paid for.
    """
    from pathlib import Path

    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{option} {path}: is a folder; give a file")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        return target.open("w", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write it: {exc.strerror or exc}") from None


def load_project(path: Any, **options: Any) -> Any:
    """``crew.config.load_project`` with stdout sent to stderr meanwhile.

    Loading imports the folder's ``tools.py``, which runs its code: a module-level
    ``print`` (or a subprocess it starts) must not land in the result on stdout (the
    answer, ``--json``, the JSON Lines of ``--for-each``, ``validate``'s report).
    """
    from crew.cli.output import tool_output_to_stderr
    from crew.config import load_project as load

    with tool_output_to_stderr():
        return load(path, **options)


def llm_option(value: str | None) -> str | None:
    """``--llm`` checked before anything loads: a name with nothing after its provider is refused here."""
    if value is None:
        return None
    from crew.models.transport import model_name_problem

    example = "(e.g. --llm test, --llm openai/gpt-4o-mini)"
    if not value.strip():
        raise UsageError(f"--llm needs a model name {example}")
    problem = model_name_problem(value)
    if problem is not None:
        raise UsageError(f"--llm {value!r}: {problem} {example}")
    return value


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 task``, ``2 tasks``."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def _report(exc: Exception, debug: bool) -> int:
    from crew.errors import ConfigError, CrewError

    if debug:
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    if isinstance(exc, ConfigError):
        for line in [*exc.errors, *getattr(exc, "warnings", ())]:
            _say(line if _located(line) else f"crew: {line}")
        if len(exc.errors) > 1:
            _say(f"crew: {len(exc.errors)} errors; nothing was run")
        return EXIT_USAGE
    if isinstance(exc, UsageError):
        _say(f"crew: {exc}")
        return EXIT_USAGE
    if isinstance(exc, CrewError):
        _say(f"crew: {exc}")
        return EXIT_FAILED
    _say(f"crew: unexpected error: {type(exc).__name__}: {exc}" + ("" if debug else " (--debug shows the traceback)"))
    return EXIT_FAILED


def _located(line: str) -> bool:
    head = line.split(": ", 1)[0]
    return head.count(":") >= 1 and head.rsplit(":", 1)[-1].isdigit()


def _say(text: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr, flush=True)


def _silence_stdout() -> None:
    """Point stdout at devnull so the interpreter's final flush does not raise again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
