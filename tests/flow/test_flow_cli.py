"""Flow runs from the command line: ``crew runs``, ``crew show`` (text and page), ``crew resume``, ``crew replay``."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import crew.cli
from crew.store import RunStore

PIPELINE = """
from pathlib import Path

from crew import Agent, Crew, Task
from crew.flow import Flow, listen, router, start

HERE = Path(__file__).parent


class Pipeline(Flow):
    @start()
    def fetch(self):
        return 3

    @router(fetch)
    def route(self, n):
        return "big" if n > 2 else "small"

    @listen("big")
    def summarise(self):
        agent = Agent(role="summariser", goal="sum up", backstory="sums", llm="test")
        crew = Crew(agents=[agent], tasks=[Task(description="sum up", expected_output="a line", agent=agent)])
        return crew.kickoff().raw

    @listen(summarise)
    def save(self, text):
        if (HERE / "broken").exists():
            raise RuntimeError("disk full")
        (HERE / "saved.txt").write_text(text)
        return "saved"
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A folder with a flow module whose run failed at its last step, recorded in ``.crew/runs.db``."""
    (tmp_path / "pipeline_flow.py").write_text(textwrap.dedent(PIPELINE))
    (tmp_path / "broken").touch()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CREW_STORE", str(tmp_path / ".crew" / "runs.db"))  # the suite points it elsewhere
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("pipeline_flow", None)
    module = importlib.import_module("pipeline_flow")
    flow = module.Pipeline(store=tmp_path / ".crew" / "runs.db")
    with pytest.raises(Exception, match="disk full"):
        flow.kickoff()
    yield tmp_path, flow._run.run_id
    sys.modules.pop("pipeline_flow", None)


def test_runs_and_show_list_the_flow_its_steps_and_its_crew(project: Any, capsys: pytest.CaptureFixture[str]):
    folder, run_id = project
    assert crew.cli.main(["runs"]) == 0
    listed = capsys.readouterr().out
    assert f"{run_id[:12]}  failed" in listed and "Pipeline (flow)" in listed
    assert f"kickoff in {run_id[:12]}:summarise" in listed  # the crew, a child of the flow's step
    assert crew.cli.main(["show", run_id[:8]]) == 0
    shown = capsys.readouterr().out
    assert f"run {run_id} · flow 'Pipeline' · failed · kickoff" in shown
    assert re.search(
        r"\nstarted \S+ \S+ · 4 step runs · [\d.]+s · [\d,]+ tokens · \$0\.0000\n", shown
    )  # a crew's header
    assert "[2] route #1 · done" in shown and "    output: big" in shown
    assert "    crew 'crew' · run " in shown and "      [1] task_1 · done · summariser" in shown
    assert "[4] save #1 · failed" in shown and "    error: RuntimeError: disk full" in shown
    assert crew.cli.main(["show", run_id[:8], "-o", "run.html"]) == 0
    page = (folder / "run.html").read_text()
    assert page.count('<g class="step"') == 4 and page.count('<g class="task"') == 1
    assert 'data-step="save" data-status="failed"' in page


def test_resume_in_another_process_runs_only_the_unfinished_step_and_a_second_resume_exits_2(project: Any):
    folder, run_id = project
    (folder / "broken").unlink()
    # the checkout only: this worker's sys.path may hold folders other tests imported crews from
    # (one with a crew.py would stand in for the crew package)
    env = {**os.environ, "PYTHONPATH": str(Path(crew.__file__).resolve().parent.parent)}
    done = subprocess.run(
        [sys.executable, "-m", "crew", "resume", run_id[:12]], cwd=folder, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "saved\n" and (folder / "saved.txt").read_text().startswith("Test answer")
    db = RunStore(folder / ".crew" / "runs.db")
    resumed = next(r for r in db.runs() if r.kind == "flow")
    assert [(s.step, s.reused) for s in db.steps(resumed.id)][-2:] == [("summarise", True), ("save", False)]
    assert db.children(resumed.id) == []  # the crew was not run again
    assert crew.cli.main(["resume", run_id[:12]]) == 2
    assert crew.cli.main(["resume", resumed.id[:12]]) == 2


def test_a_step_failing_again_exits_1_and_replay_reruns_from_a_step(project: Any, capsys: pytest.CaptureFixture[str]):
    folder, run_id = project
    assert crew.cli.main(["resume", run_id[:12], "-q"]) == 1
    assert "crew: flow Pipeline: step 'save' failed: RuntimeError: disk full" in capsys.readouterr().err
    (folder / "broken").unlink()
    assert crew.cli.main(["replay", run_id[:12], "--from", "summarise", "-q"]) == 0
    assert capsys.readouterr().out == "saved\n"
    db = RunStore(folder / ".crew" / "runs.db")
    replayed = next(r for r in db.runs() if r.kind == "flow")
    assert (replayed.mode, replayed.from_task) == ("replay", "summarise")
    assert len(db.children(replayed.id)) == 1  # the crew ran again: it is at or after the step replayed from
    assert crew.cli.main(["replay", run_id[:12], "--from", "sav"]) == 2
    assert "no step 'sav'" in capsys.readouterr().err
    assert crew.cli.main(["resume", run_id[:12], "-i", "topic=x"]) == 2
    assert "goes on with its stored state" in capsys.readouterr().err
