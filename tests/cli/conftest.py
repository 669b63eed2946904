"""Fixtures for the CLI and config tests (helpers live in cli_kit.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_kit import write


@pytest.fixture
def crew_dir(tmp_path: Path):
    """``crew_dir({"crew.yaml": ...})`` writes a crew folder and returns its path."""

    def make(files: dict[str, str], name: str = "mycrew") -> Path:
        return write(tmp_path / name, files)

    return make
