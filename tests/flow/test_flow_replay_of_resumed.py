"""A replay of a resumed flow run starts from the state its steps left, as a replay of the first run does."""

from __future__ import annotations

from pathlib import Path

import pytest
from flow_project_kit import copy_project, crew

from crew.store import RunStore

_GATE = '        if not (HERE / "go").exists():\n            raise RuntimeError("not yet")\n'


def _gated_digest(tmp_path: Path, step: str) -> Path:
    """The native digest flow whose ``step`` fails until a file ``go`` is in its folder."""
    folder = copy_project("native_digest", tmp_path)
    flow = folder / "flow.py"
    head = f"    def {step}:\n"
    flow.write_text(flow.read_text().replace(head, head + _GATE))
    return folder


def _latest_flow_run(store: Path) -> str:
    with RunStore(store) as runs:
        return next(r.id for r in runs.runs() if r.kind == "flow")


def test_a_replay_of_a_resumed_run_starts_from_the_state_the_steps_left(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder, store = _gated_digest(tmp_path, "done(self)"), tmp_path / "runs.db"
    on = ("--store", str(store))
    assert crew(capsys, "kickoff", str(folder), "--llm", "test", "-q", *on)[0] == 1
    (folder / "go").touch()
    assert crew(capsys, "resume", "-q", *on)[0] == 0
    resumed = _latest_flow_run(store)
    with RunStore(store) as runs:  # the step handed on keeps the state it left, not the one the resume began with
        [gather] = [s for s in runs.steps(resumed) if s.step == "gather"]
        assert gather.reused and gather.state is not None and gather.state["path"] == ["gather"]
    code, out, err = crew(capsys, "replay", resumed[:12], "--from", "summarise", "-q", *on)
    assert (code, out) == (0, "digest of rivers: 4 steps\n"), err
