"""A crew-native flow folder: ``flow.py`` (or ``FILE.py:Class``) beside the crew folders its steps load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flow_project_kit import PROJECTS, crew, kickoff_json, write

DIGEST = PROJECTS / "native_digest"


def test_flow_py_runs_with_its_crew_on_the_runs_model(capsys: pytest.CaptureFixture[str]) -> None:
    document = kickoff_json(capsys, str(DIGEST), "--llm", "test", "-i", "topic=lakes")
    assert document["flow"] == "DigestFlow" and document["status"] == "done"
    assert document["state"]["path"] == ["gather", "summarise", "check", "done"]
    assert document["output"] == "digest of lakes: 4 steps"
    # load_crew() inside the step got the crew as the run builds it: --llm test, no key needed
    assert "Summarise these sources about lakes: source one, source two" in document["state"]["summary"]


def test_a_crew_that_needs_a_key_refuses_the_flow_before_it_runs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = crew(capsys, "kickoff", str(DIGEST), "-q")
    assert code == 2 and out == ""
    assert "model 'openai/gpt-4o-mini' (for summariser) needs OPENAI_API_KEY" in err


def test_file_and_class_name_the_flow(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = write(
        tmp_path / "two",
        {
            "flows.py": """
            from crew.flow import Flow, listen, start


            class First(Flow):
                @start()
                def one(self):
                    return "first"


            class Second(Flow):
                @start()
                def one(self):
                    return 1

                @listen(one)
                def two(self, n):
                    return n + 1
            """
        },
    )
    code, out, err = crew(capsys, "kickoff", f"{folder}/flows.py:Second", "-q")
    assert (code, out) == (0, "2\n"), err
    code, out, err = crew(capsys, "kickoff", f"{folder}/flows.py", "-q")
    assert code == 2 and "several Flow subclasses (First, Second): name one, e.g." in err
    code, out, err = crew(capsys, "kickoff", f"{folder}/flows.py:Third", "-q")
    assert code == 2 and "no Flow subclass 'Third' (found: First, Second)" in err


def test_a_failing_step_exits_1_naming_the_step(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = write(
        tmp_path / "broken",
        {
            "flow.py": """
            from crew.flow import Flow, listen, start


            class Broken(Flow):
                @start()
                def fine(self):
                    return 1

                @listen(fine)
                def boom(self, n):
                    raise ValueError("no more tea")
            """
        },
    )
    code, out, _ = crew(capsys, "kickoff", str(folder), "--json", "-q")
    document = json.loads(out)
    assert code == 1 and document["status"] == "failed" and document["step"] == "boom"
    assert "no more tea" in document["error"] and document["method_outputs"] == [1]


def test_stream_json_prints_the_steps_as_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = crew(capsys, "kickoff", str(DIGEST), "--llm", "test", "--stream", "--json")
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    kinds = [line["type"] for line in lines]
    assert kinds[0] == "flow.started" and kinds[-1] == "output" and kinds[-2] == "flow.done"
    assert [line["step"] for line in lines if line["type"] == "step.done"] == ["gather", "summarise", "check", "done"]
    assert {"type": "task.done", "task": "summarise"}.items() <= next(
        line for line in lines if line["type"] == "task.done"
    ).items()
    assert lines[-1]["status"] == "done" and lines[-1]["output"] == "digest of rivers: 4 steps"


def test_the_run_is_stored_with_its_steps_and_its_crew_as_a_child(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from crew.store import RunStore

    store = tmp_path / "runs.db"
    document = kickoff_json(capsys, str(DIGEST), "--llm", "test", "--store", str(store))
    with RunStore(store) as runs:
        flow_run = runs.run(document["run_id"])
        assert (flow_run.kind, flow_run.status, flow_run.folder) == ("flow", "done", str(DIGEST))
        [child] = runs.children(flow_run.id)
        assert (child.crew, child.parent_step) == ("summary", "summarise")
    monkeypatch.setenv("CREW_STORE", str(store))
    code, _, err = crew(capsys, "kickoff", str(DIGEST), "--llm", "test", "-q", "--no-store")
    assert code == 0, err
    with RunStore(store) as runs:
        assert len(runs.runs()) == 2  # the flow run and its crew's, from the first kickoff only


def test_a_flow_module_that_fails_to_import_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = write(
        tmp_path / "bad",
        {
            "flow.py": """
            from crew.flow import Flow, start

            SETTINGS = {}["missing"]


            class Bad(Flow):
                @start()
                def one(self):
                    return 1
            """
        },
    )
    code, out, err = crew(capsys, "kickoff", str(folder), "-q")
    assert code == 2 and out == "" and "Traceback" not in err
    assert "bad/flow.py: importing the flow failed: KeyError: 'missing'" in err


def test_a_flow_ending_in_none_prints_no_output_on_kickoff_or_resume(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A last step that returns nothing (CrewAI's lead-score flow saves files and returns None): stdout
    stays empty on kickoff and on resume alike, rather than "None"."""
    folder = write(
        tmp_path / "quiet",
        {
            "flow.py": """
            from pathlib import Path

            from crew.flow import Flow, listen, start

            HERE = Path(__file__).parent


            class Quiet(Flow):
                @start()
                def fine(self):
                    return 1

                @listen(fine)
                def save(self, n):
                    if not (HERE / "go").exists():
                        raise RuntimeError("not yet")
            """
        },
    )
    on = ("--store", str(tmp_path / "runs.db"))
    code, out, err = crew(capsys, "kickoff", str(folder), "-q", *on)
    assert code == 1 and "not yet" in err and out == ""
    (folder / "go").touch()
    code, out, err = crew(capsys, "resume", "-q", *on)
    assert (code, out) == (0, ""), err
