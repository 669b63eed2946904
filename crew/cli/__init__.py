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

from crew.cli.parser import build_parser as build_parser  # the command line, one function per command

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
    from crew.models.doors import model_name_problem

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
