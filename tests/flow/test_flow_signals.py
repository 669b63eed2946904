"""SIGTERM (and so Ctrl-C, the same path) on `crew kickoff` of a flow: the run stops, stored as interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from flow_project_kit import write

import crew
from crew.store import RunStore

_FLOW = """
import sys
import time

from crew.flow import Flow, listen, start


class Nap(Flow):
    @start()
    def first(self):
        return "awake"

    @listen(first)
    def nap(self, text):
        print("napping", file=sys.stderr, flush=True)
        time.sleep(600)  # a sync step in its worker thread: nothing can stop it, the run stops waiting
        return "rested"
"""


def test_sigterm_stops_a_flow_kickoff_as_it_stops_a_crews(tmp_path: Path) -> None:
    folder = write(tmp_path / "nap", {"flow.py": _FLOW})
    store = tmp_path / "runs.db"
    env = {**os.environ, "PYTHONPATH": str(Path(crew.__file__).resolve().parent.parent)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "crew", "kickoff", str(folder), "--store", str(store), "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    try:
        while "napping" not in (line := proc.stderr.readline()):  # the step is in its sleep
            assert line, "the kickoff ended before its step started"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:  # a failed check leaves no kickoff behind
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    run = next(r for r in RunStore(store).runs() if r.kind == "flow")
    assert "crew: terminated; finished: first; stopped while running: nap" in err
    assert f"resume with: crew resume {run.id[:12]}" in err
    assert '"status": "terminated"' in out
    assert run.status == "interrupted"
    assert [(s.step, s.status) for s in RunStore(store).steps(run.id)] == [("first", "done"), ("nap", "interrupted")]
