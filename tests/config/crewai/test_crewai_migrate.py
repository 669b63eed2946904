"""`crew migrate` writes where it is told and nowhere else, and the crew it writes is the project's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from crewai_kit import PROJECTS

from crew.config.crewai.migrate import migrate
from crew.config.project import load_crew
from crew.errors import ConfigError


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "flat_crew"
    shutil.copytree(PROJECTS / "flat_crew", folder)
    return folder


def test_a_crew_native_link_out_of_the_project_is_refused(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "crew_native").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ConfigError, match="symbolic link out of the project"):
        migrate(project)
    assert list(outside.iterdir()) == []


def test_an_output_file_planted_as_a_link_is_not_written_through(project: Path, tmp_path: Path) -> None:
    (project / "crew_native").mkdir()
    victim = tmp_path / "victim.yaml"  # does not exist yet: the link dangles, so `exists()` alone misses it
    (project / "crew_native" / "crew.yaml").symlink_to(victim)
    with pytest.raises(ConfigError, match="symbolic link; crew migrate does not write through one"):
        migrate(project)
    assert not victim.exists()


def test_a_crew_file_linked_from_outside_is_not_copied(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.py"
    shutil.move(project / "crew.py", elsewhere)
    (project / "crew.py").symlink_to(elsewhere)
    with pytest.raises(ConfigError, match=r"crew\.py is a symbolic link out of the project"):
        migrate(project)


def test_the_migrated_crew_keeps_the_projects_name_and_a_relative_path(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "elsewhere" / "migrated"
    migration = migrate(project, out)
    assert migration.folder == out
    tools = migration.written[1].read_text(encoding="utf-8")
    assert str(tmp_path) not in tools  # the two folders can move together
    assert "Path(__file__).resolve().parent / '../../flat_crew'" in tools
    assert load_crew(out, llm="test").name == load_crew(project, llm="test").name == "flat_crew"
    moved = tmp_path / "moved"
    moved.mkdir()
    shutil.move(tmp_path / "elsewhere", moved / "elsewhere")
    shutil.move(project, moved / "flat_crew")
    assert load_crew(moved / "elsewhere" / "migrated", llm="test").name == "flat_crew"
