"""`crew kickoff DIR` of a CrewAI flow project: its steps, order and routes, crew's agents doing the crews' work."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from flow_project_kit import copy_project, crew, kickoff_json, write


@pytest.fixture(scope="module")
def review_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """One offline run of the review loop fixture, shared by the tests that read it (a module fixture
    cannot take capsys: the command's streams are caught by hand)."""
    import io
    import json
    from contextlib import redirect_stderr, redirect_stdout

    from crew.cli import main

    project = copy_project("review_loop_flow", tmp_path_factory.mktemp("review"))
    out, err = io.StringIO(), io.StringIO()
    before = set(sys.modules)
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["kickoff", str(project), "--llm", "test", "--json", "-q"])
    assert code == 0, err.getvalue()
    document = json.loads(out.getvalue())
    document["left in sys.modules"] = sorted(
        m for m in set(sys.modules) - before if m.split(".")[0] in ("crewai", "crewai_tools", "review_loop_flow")
    )
    return project, document


def test_the_steps_run_in_the_authors_order_along_the_routes(review_run: tuple[Path, dict]) -> None:
    _, document = review_run
    assert document["status"] == "done"
    notes = document["state"]["notes"]
    # @start("revise") fires again each time the router says "revise"; three drafts, three reviews
    assert notes[:6] == ["draft 0", "review int", "draft 1", "review int", "draft 2", "review int"]
    # the two listeners of "approved" both ran (in either order), then and_(...) fired once
    assert sorted(notes[6:8]) == ["archived", "headlines 2"] and notes[8:] == ["published"]
    assert document["output"] == "published green tea after 3 rounds"
    assert document["state"]["id"]  # the state model declares no id: the flow gives it one


def test_the_crews_are_the_crew_folders_run_by_crew(review_run: tuple[Path, dict]) -> None:
    project, document = review_run
    # the draft the crew wrote is the test model's answer to the task crew read from tasks.yaml
    assert document["state"]["draft"]
    # a step's relative path is the project's root, as under `crewai flow kickoff`
    assert (project / "archive.txt").read_text(encoding="utf-8") == document["state"]["draft"]


def test_the_crewai_namespace_is_gone_after_the_run(review_run: tuple[Path, dict]) -> None:
    """The stand-ins and the project's modules are served for the run only: none is left behind."""
    assert review_run[1]["left in sys.modules"] == []


def test_inputs_set_state_fields_before_the_first_step(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    project = copy_project("review_loop_flow", tmp_path)
    package = project / "src" / "review_loop_flow"  # the package folder names its project too
    document = kickoff_json(capsys, str(package), "--llm", "test", "-i", "topic=oolong")
    assert document["output"] == "published oolong after 3 rounds"
    assert (project / "archive.txt").is_file()  # run from the project's root, whichever folder was named


_MAIN = """
from crewai.flow.flow import Flow, listen, start{extra}
from pydantic import BaseModel


class S(BaseModel):
    done: bool = False


class ShopFlow(Flow[S]):
    @start()
    def first(self):
        open("ran.txt", "w").write("the step ran")
"""


def _project(tmp_path: Path, extra: str = "", files: dict[str, str] | None = None) -> Path:
    return write(
        tmp_path / "shop_flow",
        {
            "pyproject.toml": '[project]\nname = "shop_flow"\n\n[tool.crewai]\ntype = "flow"\n',
            "src/shop_flow/__init__.py": "",
            "src/shop_flow/main.py": _MAIN.format(extra=extra),
            **(files or {}),
        },
    )


def test_crewai_api_crew_does_not_have_is_refused_at_its_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    project = _project(tmp_path, "\nfrom crewai.flow import HumanFeedbackProvider")
    code, out, err = crew(capsys, "kickoff", str(project), "--llm", "test")
    assert code == 2 and out == ""
    assert "shop_flow/src/shop_flow/main.py:2: `HumanFeedbackProvider` of `crewai.flow` is CrewAI API" in err
    assert not (project / "ran.txt").exists() and "Traceback" not in err


def test_an_outside_service_is_refused_before_anything_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ACME_TRELLO_KEY", raising=False)  # the .env below sets it: gone again after the test
    helper = """
    import os

    from acme_trello_sdk import Board

    KEY = os.getenv("ACME_TRELLO_KEY")


    def post(text):
        Board(KEY).post(text)
    """
    project = _project(tmp_path, files={"src/shop_flow/utils/board.py": helper})
    main = project / "src/shop_flow/main.py"
    main.write_text("from shop_flow.utils.board import post\n" + main.read_text(), encoding="utf-8")
    code, out, err = crew(capsys, "kickoff", str(project), "--llm", "test")
    assert code == 2 and out == ""
    assert "utils/board.py:3: imports acme_trello_sdk (Trello), which is not installed" in err
    assert "utils/board.py:5: reads the environment variable ACME_TRELLO_KEY (Trello), which is not set" in err
    assert not (project / "ran.txt").exists()
    (project / ".env").write_text("ACME_TRELLO_KEY=from-the-dotenv\n", encoding="utf-8")  # read as CrewAI reads it
    code, out, err = crew(capsys, "kickoff", str(project), "--llm", "test")
    assert code == 2 and "ACME_TRELLO_KEY" not in err and "acme_trello_sdk" in err


def test_a_crew_that_cannot_load_refuses_the_flow_naming_the_tool(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    project = copy_project("review_loop_flow", tmp_path)
    crew_file = project / "src/review_loop_flow/crews/draft_crew/draft_crew.py"
    text = crew_file.read_text(encoding="utf-8").replace("tools=[WordCountTool()]", "tools=[SerperDevTool()]")
    crew_file.write_text("from crewai_tools import SerperDevTool\n" + text, encoding="utf-8")
    code, out, err = crew(capsys, "kickoff", str(project), "--llm", "test")
    assert code == 2 and out == ""
    assert "draft_crew.py" in err and "SerperDevTool" in err and "crewai-tools" in err
    assert not (project / "archive.txt").exists()


def test_a_failed_crewai_flow_resumes_in_another_kickoff_at_its_failed_step(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import json

    project = copy_project("review_loop_flow", tmp_path)
    main = project / "src/review_loop_flow/main.py"
    gate = '        if not __import__("os").path.exists("go.txt"):\n            raise RuntimeError("not yet")\n'
    main.write_text(main.read_text().replace("    def publish(self):\n", "    def publish(self):\n" + gate))
    store = str(tmp_path / "runs.db")
    code, out, _ = crew(capsys, "kickoff", str(project), "--llm", "test", "--json", "-q", "--store", store)
    failed = json.loads(out)
    assert code == 1 and failed["step"] == "publish" and "not yet" in failed["error"]
    (project / "go.txt").write_text("go")
    code, out, err = crew(capsys, "resume", failed["run_id"], "--store", store, "--json")
    assert code == 0, err
    assert json.loads(out)["output"] == "published green tea after 3 rounds"
    from crew.store import RunStore

    with RunStore(store) as runs:
        resumed = runs.runs()[0]
        assert resumed.continued_from == failed["run_id"]
        assert runs.children(resumed.id) == []  # no crew ran again: only `publish` did


def test_a_human_feedback_step_pauses_the_project_with_exit_3_and_approve_then_resume_finish_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import re
    import shlex

    from crew.store import RunStore

    project = copy_project("feedback_flow", tmp_path)
    store = str(tmp_path / "runs.db")
    code, out, err = crew(capsys, "kickoff", str(project), "--llm", "test", "--store", store, "-q")
    assert code == 3, err
    assert "paused: step 'write_note' asks: Publish this note?" in err
    approve = re.search(r"answer with: (crew approve \S+ ask-write_note-1-1 .*)", err)
    resume = re.search(r"then: (crew resume \S+)", err)
    assert approve is not None and resume is not None and out == ""
    argv = [*shlex.split(approve.group(1).replace('"..."', '"approved, ship it"'))[1:], "--store", store]
    assert crew(capsys, *argv)[0] == 0
    code, out, err = crew(capsys, *shlex.split(resume.group(1))[1:], "--store", store, "-q")  # no --llm: the run's
    assert code == 0, err
    assert out == "published after 1 writing (approved, ship it)\n"
    # the step's body ran once: its output was kept with the question, the resume handed it on
    assert (project / "written.txt").read_text(encoding="utf-8") == "written\n"
    db = RunStore(store)
    runs = [r for r in db.runs() if r.kind == "flow"]
    assert sorted(r.status for r in runs) == ["done", "paused"]
    assert sum(len(db.children(r.id)) for r in runs) == 1  # its crew ran once too
