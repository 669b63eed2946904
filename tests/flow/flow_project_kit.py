"""Shared by the flow project tests: the fixture projects, a copy of one to run in, and the CLI in-process."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

PROJECTS = Path(__file__).resolve().parent / "projects"


def copy_project(name: str, tmp_path: Path) -> Path:
    """A fixture project copied under ``tmp_path``: a flow writes files in its own folder."""
    target = tmp_path / name
    shutil.copytree(PROJECTS / name, target, ignore=shutil.ignore_patterns("__pycache__", ".crew"))
    return target


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return folder


def crew(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The ``crew`` command run in this process: (exit code, stdout, stderr)."""
    from crew.cli import main

    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def kickoff_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, err = crew(capsys, "kickoff", *argv, "--json", "-q")
    assert code == 0, err
    return json.loads(out)
