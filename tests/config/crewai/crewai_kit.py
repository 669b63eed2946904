"""Shared by the CrewAI project tests: where the fixture projects are, and the CLI helpers."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECTS = HERE / "projects"
sys.path.insert(0, str(HERE.parents[1] / "cli"))  # cli_kit: write folders, run the real `crew` command
