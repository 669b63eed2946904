"""`crew validate --no-import` on a CrewAI project runs none of its code, as it says.

Every place a project's code could run when read writes a marker file when it does: the
module level of crew.py, of main.py and of a tool module, the body of a class defined in
crew.py (an output model), and a default argument of a function there (a guardrail).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from crewai_kit import PROJECTS  # noqa: F401 - puts cli_kit on the path

from cli_kit import run_crew  # isort: skip

CREW_PY = """\
from pathlib import Path

from crewai import Agent, Crew, Task
from crewai.project import CrewBase, agent, crew, task
from pydantic import BaseModel

from tools.search import search

Path("{markers}/crew_module").touch()


class Report(BaseModel):
    title: str
    Path("{markers}/class_body").touch()


def guard(output, seen=Path("{markers}/default_argument").touch()):
    return True, output


@CrewBase
class Marked:
    agents_config = "config/agents.yaml"
    tasks_config = "config/tasks.yaml"

    @agent
    def writer(self) -> Agent:
        return Agent(config=self.agents_config["writer"], tools=[search])

    @task
    def report(self) -> Task:
        return Task(config=self.tasks_config["report"], output_pydantic=Report, guardrail=guard)

    @crew
    def crew(self) -> Crew:
        return Crew(agents=self.agents, tasks=self.tasks)
"""

TOOL = '''\
from pathlib import Path

from crewai.tools import tool

Path("{markers}/tool_module").touch()


@tool("Search")
def search(query: str) -> str:
    """Search for a query."""
    return query
'''

MAIN = """\
from pathlib import Path

from crew import Marked

Path("{markers}/main_module").touch()


def run():
    Marked().crew().kickoff(inputs={{"topic": "otters"}})
"""


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    folder, markers = tmp_path / "marked", tmp_path / "markers"
    markers.mkdir()
    (folder / "config").mkdir(parents=True)
    (folder / "tools").mkdir()
    (folder / "tools" / "__init__.py").write_text(
        f'from pathlib import Path\nPath("{markers}/tools_package").touch()\n'
    )
    (folder / "tools" / "search.py").write_text(TOOL.format(markers=markers))
    (folder / "crew.py").write_text(CREW_PY.format(markers=markers))
    (folder / "main.py").write_text(MAIN.format(markers=markers))
    (folder / "config" / "agents.yaml").write_text(
        "writer:\n  role: Writer\n  goal: Write about {topic}\n  backstory: b\n"
    )
    (folder / "config" / "tasks.yaml").write_text(
        "report:\n  description: A report on {topic}.\n  expected_output: A title.\n  agent: writer\n"
    )
    return folder, markers


def test_validate_no_import_runs_none_of_the_projects_code(project: tuple[Path, Path]) -> None:
    folder, markers = project
    done = run_crew("validate", str(folder), "--no-import")
    assert done.returncode == 0, done.stderr
    assert "1 agent, 1 task, 1 tool" in done.stdout and "--no-import" in done.stdout
    assert sorted(p.name for p in markers.iterdir()) == []


def test_without_it_reading_imports_the_tools_and_builds_the_classes_crew_py_names(project: tuple[Path, Path]) -> None:
    """What reading runs, as docs/migrating-from-crewai.md says: the tool modules (their packages too),
    and the classes and functions crew.py defines and names, with their default arguments."""
    folder, markers = project
    done = run_crew("validate", str(folder))
    assert done.returncode == 0, done.stderr
    ran = sorted(p.name for p in markers.iterdir())
    assert ran == ["class_body", "default_argument", "tool_module", "tools_package"]


def test_a_name_crew_py_neither_imports_nor_defines_is_still_reported(project: tuple[Path, Path]) -> None:
    folder, markers = project
    crew_py = folder / "crew.py"
    crew_py.write_text(crew_py.read_text().replace("output_pydantic=Report", "output_pydantic=Missing"))
    (folder / "tools" / "search.py").unlink()
    done = run_crew("validate", str(folder), "--no-import")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "'Missing' is neither imported nor defined" in done.stderr
    assert "no module 'tools.search'" in done.stderr
    assert list(markers.iterdir()) == []
