"""Shared by the CLI and config tests: write crew folders, run the real `crew` command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

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
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m crew.cli ARGS`` (the real command) with pipes for stdout and stderr."""
    return subprocess.run(
        [sys.executable, "-m", "crew.cli", *args],
        cwd=cwd or REPO,
        env=env or crew_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


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
