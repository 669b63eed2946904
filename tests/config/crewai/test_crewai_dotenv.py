"""A CrewAI project's `.env` and `MODEL` are read as CrewAI reads them, never over the environment."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from crewai_kit import PROJECTS

from cli_kit import crew_env, run_crew  # isort: skip  (crewai_kit puts it on the path)
from crew.config.crewai.dotenv import parse
from crew.config.project import load_project

SECRET = "sk-dotenv-0123456789abcdefghij"
DOTENV = f"""\
# written by `crewai create`
MODEL=test
OPENAI_API_KEY="{SECRET}"
export CREW_DOTENV_PROBE='from the file'  # a comment
CREW_DOTENV_KEPT=from the file
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "latest_ai"
    shutil.copytree(PROJECTS / "latest_ai", folder)
    (folder / ".env").write_text(DOTENV, encoding="utf-8")
    return folder


def test_kickoff_takes_the_model_from_dotenv_and_says_which_file_without_its_values(
    project: Path, tmp_path: Path
) -> None:
    store = tmp_path / "runs.db"
    env = {k: v for k, v in crew_env(CREW_STORE=str(store)).items() if k not in ("MODEL", "OPENAI_API_KEY")}
    done = run_crew("kickoff", str(project), "--json", "-q", "--out", str(tmp_path / "out"), env=env)
    assert done.returncode == 0, done.stderr  # no --llm, no CREW_LLM: MODEL=test from .env
    assert json.loads(done.stdout)["status"] == "done"
    [line] = [line for line in done.stderr.splitlines() if ".env" in line]
    assert line.endswith(
        ".env:1: note: took MODEL, OPENAI_API_KEY, CREW_DOTENV_PROBE, CREW_DOTENV_KEPT from this file, as CrewAI does"
    )
    assert SECRET not in done.stdout + done.stderr and SECRET.encode() not in store.read_bytes()


def test_the_environment_wins_over_dotenv(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MODEL", "OPENAI_API_KEY", "CREW_DOTENV_PROBE"):
        monkeypatch.setenv(name, "")  # recorded, so the values the .env sets below are undone after the test
        monkeypatch.delenv(name)  # (a delenv of an absent name records nothing: the key stayed for later tests)
    monkeypatch.setenv("CREW_DOTENV_KEPT", "from the environment")
    loaded = load_project(project)
    assert os.environ["CREW_DOTENV_KEPT"] == "from the environment"
    assert os.environ["CREW_DOTENV_PROBE"] == "from the file" and os.environ["OPENAI_API_KEY"] == SECRET
    assert loaded.env_note is not None and "CREW_DOTENV_KEPT already set in the environment, kept" in str(
        loaded.env_note
    )
    assert loaded.crew.llm == "test"  # MODEL, as CrewAI's default model


def test_the_dotenv_lines_crewai_projects_write() -> None:
    assert parse(DOTENV + 'QUOTED="a \\"b\\"\\nc"\n  # indented comment\nBARE=x #note\nEMPTY=\n') == {
        "MODEL": "test",
        "OPENAI_API_KEY": SECRET,
        "CREW_DOTENV_PROBE": "from the file",
        "CREW_DOTENV_KEPT": "from the file",
        "QUOTED": 'a "b"\nc',
        "BARE": "x",
        "EMPTY": "",
    }


def test_a_dotenv_above_the_project_or_linked_from_outside_is_not_read(tmp_path: Path) -> None:
    from crew.config.crewai.dotenv import find

    flat = tmp_path / "projects" / "flat_crew"
    shutil.copytree(PROJECTS / "flat_crew", flat)
    (tmp_path / "projects" / ".env").write_text("MODEL=test\n")  # no pyproject.toml: the folder is the project
    assert find(flat) is None
    (flat / ".env").symlink_to(tmp_path / "projects" / ".env")
    assert find(flat) is None
    src = tmp_path / "latest_ai"
    shutil.copytree(PROJECTS / "latest_ai", src)
    (src / ".env").write_text("MODEL=test\n")
    assert find(src / "src" / "latest_ai") == src / ".env"  # the project root, from its package folder
