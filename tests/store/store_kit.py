"""Helpers of the run-store tests: crew folders, the `crew` command in this process, and a real one to kill."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "cli"))
from cli_kit import in_process  # noqa: E402  (tests/cli holds the in-process runner)


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return folder


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in ("CREW_LLM", "NO_COLOR", "TERM", "CREW_STORE")}
    out.update(LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONUNBUFFERED="1", PYTHONPATH=str(REPO), **extra)
    return out


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "crew.cli", *args]


def crew(
    *args: str, cwd: Path | None = None, environ: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """The ``crew`` command run to its end, in this process (cli_kit.in_process: its cwd, environment,
    descriptors and exit code as a process has them); ``start`` runs a real one, to signal or kill."""
    return in_process(*args, cwd=cwd or REPO, env=environ or env())


def start(*args: str, cwd: Path | None = None, environ: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command(*args),
        cwd=cwd or REPO,
        env=environ or env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
