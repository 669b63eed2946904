"""Shared by the CLI and config tests: write crew folders, run the `crew` command (in this process or a new one)."""

from __future__ import annotations

import contextlib
import gc
import io
import logging
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

TOOLS_PY = '''
from pydantic import BaseModel
from crew import tool
from crew.tools.base import BaseTool

LIMIT = 3

@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"

def shout(text: str) -> str:
    """Say it loudly."""
    return text.upper()

def nodoc(x: int) -> int:
    return x

def only_ok(arguments, result):
    return "ok" in str(result)

def reject(output):
    return (False, "never good enough")

class Report(BaseModel):
    title: str

class Counter(BaseTool):
    name: str = "counter"
    description: str = "Count the characters of a text."

    def _run(self, text: str) -> int:
        return len(text)

counter_instance = Counter(name="instance_counter")
'''


def write(folder: Path, files: dict[str, str]) -> Path:
    """Write dedented files (and a standard tools.py unless given) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {"tools.py": TOOLS_PY, **files}
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return folder


def crew_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CREW_LLM", "NO_COLOR", "TERM")}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONUNBUFFERED="1", **extra)
    return env


def run_crew(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """The ``crew`` command with ARGS: stdout, stderr and exit code as a subprocess would give them.

    By default ``crew.cli.main`` runs in this process (see ``in_process``): the command's behaviour
    without a new interpreter importing crew and litellm each time. ``process=True`` runs
    ``python -m crew.cli ARGS`` for real, for the tests whose point is the process (its signals,
    descriptors, imports, the interpreter's own exit).
    """
    if not process:
        return in_process(*args, cwd=cwd, env=env)
    return subprocess.run(
        [sys.executable, "-m", "crew.cli", *args],
        cwd=cwd or REPO,
        env=env or crew_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def in_process(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``crew.cli.main(ARGS)`` run here as ``python -m crew.cli`` would run it: in ``cwd``, with exactly
    ``env`` as the environment, stdin empty, ``sys.stdout``/``sys.stderr`` on descriptors 1 and 2 and
    those on files (not a terminal, and what a tool's own subprocess writes is caught too), Python's
    default warning filters printing to stderr, an uncaught exception printed as a traceback with exit
    code 1. Everything is put back afterwards."""
    from crew.cli import main

    environment = env or crew_env()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_env, saved_cwd, saved_path = dict(os.environ), os.getcwd(), list(sys.path)
    logs = _LogState()
    with tempfile.TemporaryFile() as out_file, tempfile.TemporaryFile() as err_file, open(os.devnull) as stdin:
        for stream in saved_streams[1:]:
            stream.flush()
        saved_fds = os.dup(1), os.dup(2)
        os.dup2(out_file.fileno(), 1)
        os.dup2(err_file.fileno(), 2)
        try:
            os.chdir(cwd or REPO)
            os.environ.clear()
            os.environ.update(environment)
            sys.stdin, sys.stdout, sys.stderr = stdin, _descriptor(1), _descriptor(2)
            with warnings.catch_warnings():
                _default_warnings()
                code = _exit_code(main, list(args))
            # what a process's exit closes: a kickoff's run store is left in a reference cycle (its
            # connection, -wal and -shm open, the WAL not checkpointed) until the collector runs
            gc.collect(1)
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(OSError, ValueError):
                    stream.flush()
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            for fd, saved in zip((1, 2), saved_fds, strict=True):
                os.dup2(saved, fd)
                os.close(saved)
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)
            sys.path[:] = saved_path
            logs.restore()
        stdout, stderr = _text(out_file), _text(err_file)
    return subprocess.CompletedProcess(["crew", *args], code, stdout, stderr)


def _descriptor(fd: int) -> io.TextIOWrapper:
    """A text stream on ``fd`` as an unbuffered interpreter's sys.stdout is: utf-8, written through."""
    return io.TextIOWrapper(open(fd, "wb", buffering=0, closefd=False), encoding="utf-8", write_through=True)


def _text(file: Any) -> str:
    file.seek(0)
    return file.read().decode("utf-8", errors="replace")


def _exit_code(main: Callable[[list[str]], int], argv: list[str]) -> int:
    """The exit status of ``sys.exit(main(argv))``: SystemExit's code, or 1 after a printed traceback."""
    try:
        code: object = main(argv)
    except SystemExit as stop:
        code = stop.code
    except BaseException:  # noqa: BLE001  (what the interpreter does with an uncaught exception)
        traceback.print_exc()
        return 1
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _default_warnings() -> None:
    """The filters of a plain ``python`` (no -W, no PYTHONWARNINGS), warnings printed to ``sys.stderr``."""
    warnings.resetwarnings()
    warnings.simplefilter("default")
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
    for category in (PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.filterwarnings("ignore", category=category)

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, *rest: Any) -> None:
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno))

    warnings.showwarning = show


class _LogState:
    """The ``crew`` logger as it was (``--log-level`` adds a stderr handler and sets a level)."""

    def __init__(self) -> None:
        from crew.common import events

        self.events = events
        self.logger = logging.getLogger("crew")
        self.handlers, self.level = list(self.logger.handlers), self.logger.level
        self.settings = events._logger, events._json_logs

    def restore(self) -> None:
        self.logger.handlers[:] = self.handlers
        self.logger.setLevel(self.level)
        self.events._logger, self.events._json_logs = self.settings


def terminal_screen(data: str) -> list[str]:
    """The lines a terminal shows after ``data``: enough of one to check the live view.

    Handles what the view sends: newlines, ``ESC[nF`` (up n lines, to the start), ``ESC[J``
    (clear to the end of the screen) and colours (ignored).
    """
    lines, row = [""], 0
    for token in re.split(r"(\x1b\[[0-9;]*[A-Za-z]|\r?\n|\r)", data):
        if not token or token == "\r":
            continue
        if token.endswith("\n"):
            row += 1
            if row == len(lines):
                lines.append("")
            continue
        code = re.fullmatch(r"\x1b\[(\d*)([A-Za-z])", token)
        if code is None:
            lines[row] += token
        elif code.group(2) == "F":
            row = max(0, row - int(code.group(1) or 1))
        elif code.group(2) == "J":
            del lines[row + 1 :]
            lines[row] = ""
    return lines[:-1] if lines[-1] == "" else lines
