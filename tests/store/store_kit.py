"""Helpers of the run-store tests: crew folders and the real `crew` command in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


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
    """Run the real ``crew`` command and wait for it."""
    return subprocess.run(
        command(*args), cwd=cwd or REPO, env=environ or env(), capture_output=True, text=True, timeout=timeout
    )


def start(*args: str, cwd: Path | None = None, environ: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command(*args),
        cwd=cwd or REPO,
        env=environ or env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
