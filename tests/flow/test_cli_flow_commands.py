"""`crew validate`, `crew plot` and `crew migrate` of flow folders, and `flow.plot()`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flow_project_kit import PROJECTS, copy_project, crew, write

_LOOSE = """
from pydantic import BaseModel

from crew.flow import Flow, listen, router, start


class State(BaseModel):
    count: int = 0


class Loose(Flow[State]):
    @start()
    def begin(self):
        return 1

    @router(begin)
    def decide(self):
        if self.state.count:
            return "more"
        return "stop"

    @listen("stop")
    def end(self):
        return "ended"

    @listen("finish")
    def never(self):
        return "never"
"""


def test_validate_names_labels_nothing_returns_and_routes_nothing_hears(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = write(tmp_path / "loose", {"flow.py": _LOOSE})
    code, out, err = crew(capsys, "validate", str(folder))
    assert code == 0 and out.startswith("ok: ") and "flow Loose, 4 steps, 2 route labels" in out
    lines = err.splitlines()
    [never] = [line for line in lines if "waits for 'finish'" in line]
    assert "flow.py:25: never: warning:" in never and "no router returns (labels returned: 'more', 'stop')" in never
    [more] = [line for line in lines if "returns 'more'" in line]
    assert "flow.py:18: decide: warning: router 'decide' returns 'more', which no step waits for" in more


def test_validate_builds_the_state_from_the_inputs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = write(tmp_path / "loose", {"flow.py": _LOOSE})
    code, out, err = crew(capsys, "validate", str(folder), "-i", "count=many")
    assert code == 2 and out == ""
    assert "flow.py:10: state: flow Loose: state field 'count' of State: Input should be a valid integer" in err
    assert err.count("waits for 'finish'") == 1  # the warnings once, with the error


def test_validate_of_a_crewai_flow_project_checks_its_crews(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = crew(capsys, "validate", str(PROJECTS / "review_loop_flow"))
    assert code == 0, err
    assert "CrewAI flow project ReviewLoopFlow, 5 steps, 2 route labels, 2 crews" in out
    assert "crews/draft_crew" in out and "crews/review_crew" in out


def test_plot_draws_steps_routes_and_labels(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    page = tmp_path / "review.html"
    code, _, err = crew(capsys, "plot", str(PROJECTS / "review_loop_flow"), "-o", str(page))
    assert code == 0 and "(5 steps, 5 edges)" in err
    text = page.read_text(encoding="utf-8")
    assert "ReviewLoopFlow (flow)" in text and text.count('<g class="task">') == 5
    assert "start, again on &#x27;revise&#x27;" in text and "router -&gt; revise | approved" in text
    code, mermaid, _ = crew(capsys, "plot", str(PROJECTS / "review_loop_flow"))
    assert code == 0 and "listen on 'approved'" in mermaid and "t1 --> t2" in mermaid and "t3 --> t4" in mermaid


def test_flow_plot_writes_the_same_page(tmp_path: Path) -> None:
    from crew.flow import Flow, listen, start

    class Tiny(Flow):
        @start()
        def first(self):
            return 1

        @listen(first)
        def second(self, n):
            return n

    path = Tiny().plot(str(tmp_path / "tiny"))
    assert path.endswith("tiny.html")
    text = Path(path).read_text(encoding="utf-8")
    assert "Tiny (flow)" in text and "2 steps, 1 dependency" in text


def test_migrate_writes_a_crew_flow_that_runs_the_same_steps(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = copy_project("review_loop_flow", tmp_path)
    monkeypatch.chdir(project)  # a native flow's steps write relative to the current folder (archive.txt)
    code, _, err = crew(capsys, "migrate", str(project))
    assert code == 0, err
    native = project / "crew_native"
    flow_py = (native / "flow.py").read_text(encoding="utf-8")
    assert "from crew.flow import Flow, and_, listen, router, start" in flow_py and "crewai" not in flow_py
    assert "class DraftCrew:" in flow_py and '_load_crew(_HERE / "draft_crew")' in flow_py
    assert (native / "draft_crew" / "crew.yaml").is_file() and (native / "review_crew" / "crew.yaml").is_file()
    code, out, err = crew(capsys, "kickoff", str(native), "--llm", "test", "--json", "-q")
    assert code == 0, err
    document = json.loads(out)
    assert document["output"] == "published green tea after 3 rounds"
    assert document["state"]["notes"][:6] == ["draft 0", "review int", "draft 1", "review int", "draft 2", "review int"]
    assert (project / "archive.txt").read_text(encoding="utf-8") == document["state"]["draft"]
    code, _, err = crew(capsys, "migrate", str(project))
    assert code == 2 and "already holds flow.py" in err
