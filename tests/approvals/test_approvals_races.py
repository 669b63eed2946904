"""Two continuations of one paused run at once: one wins, the other is told which did.

A paused run is continued once (its approved calls run once) and a decision says what it
replaces. Checked then written in two steps, two resumes (or two ``crew approve``) that
start together both pass the check; the store's conditional writes let one through.
Threads race on one store file, each with its own connection, as processes would.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from crew import Agent, Crew, Task, tool
from crew.errors import StoreError
from crew.store import RunStore
from crew.store.approvals import decide, pending
from crew.store.recorder import RunRecorder
from crew.testing import FunctionModel
from crew.tools.approval import Approval

RACERS = 8
RAN: list[str] = []


@tool(requires_approval=True)
def wipe(path: str) -> str:
    """Wipe a folder."""
    RAN.append(path)
    return f"wiped {path}"


def _reply(messages: list[dict[str, Any]]) -> Any:
    if messages[-1]["role"] == "tool":
        return "Wiped."
    return [{"name": "wipe", "args": {"path": "/tmp/cache"}}]


def _crew(store: Path) -> Crew:
    agent = Agent(role="Operator", goal="g", llm=FunctionModel(_reply), tools=[wipe])
    task = Task(name="wipe", description="Wipe the cache", expected_output="x", agent=agent)
    return Crew(agents=[agent], tasks=[task], store=store)


@pytest.fixture
def paused(tmp_path: Path) -> tuple[Path, str, str]:
    """(the store file, a paused run's id, the id of the call it waits on)."""
    RAN.clear()
    store = tmp_path / "runs.db"
    out = _crew(store).kickoff()
    assert out.status == "paused" and RAN == []
    (request,) = out.pending_approvals
    return store, out.run_id, request.call_id


def _resume_recorder(store: Path, run_id: str, paused_id: str) -> RunRecorder:
    """The recorder of a resume of ``paused_id``, on a connection of its own (as another process has)."""
    return RunRecorder(RunStore(store), _crew(store), run_id=run_id, inputs={}, mode="resume", continued_from=paused_id)


def _race(count: int, body: Any) -> tuple[list[Any], list[BaseException]]:
    """``body(i)`` in ``count`` threads released together; what they returned and what they raised."""
    gate = threading.Barrier(count)
    results: list[Any] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def run(i: int) -> None:
        gate.wait()
        try:
            value = body(i)
        except Exception as exc:  # noqa: BLE001 - collected for the assertions
            with lock:
                errors.append(exc)
        else:
            with lock:
                results.append(value)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results, errors


def test_one_of_many_resumes_recorded_at_once_takes_the_paused_run(paused):
    """Every resume passed the check already (they began together); recording the run is the claim."""
    store_path, run_id, _ = paused
    recorders = [_resume_recorder(store_path, f"resume{i}", run_id) for i in range(RACERS)]
    started, errors = _race(RACERS, lambda i: (recorders[i].start(), recorders[i].run_id)[1])
    assert len(started) == 1, f"{len(started)} resumes took the paused run: {started}"
    (winner,) = started
    assert len(errors) == RACERS - 1 and all(isinstance(e, StoreError) for e in errors), errors
    assert all(f"continued already by run {winner}" in str(e) for e in errors), errors
    store = RunStore(store_path)
    assert store.run(run_id).continued_by == winner
    assert [r.id for r in store.runs() if r.continued_from == run_id] == [winner]  # the losers left no row


def test_concurrent_resumes_run_the_approved_call_once(paused):
    store_path, run_id, call_id = paused
    outputs, errors = _race(RACERS, lambda i: _crew(store_path).resume(run_id, approvals={call_id: True}))
    assert RAN == ["/tmp/cache"]
    assert [o.status for o in outputs] == ["done"]
    assert len(errors) == RACERS - 1 and all("continued already" in str(e) for e in errors), errors


def test_a_failed_run_may_still_be_resumed_again(tmp_path):
    """The claim is for paused runs: a run that failed (nothing approved in it) can be resumed twice."""
    store_path = tmp_path / "runs.db"
    recorder = RunRecorder(RunStore(store_path), _crew(store_path), run_id="failed1", inputs={})
    recorder.start()
    recorder.finish("failed", error="boom")
    for i in range(2):
        _resume_recorder(store_path, f"again{i}", "failed1").start()
    assert RunStore(store_path).run("failed1").continued_by == "again1"


def test_two_decisions_at_once_on_one_call_one_wins(paused):
    store_path, run_id, call_id = paused
    decisions = [Approval(decision="approve"), Approval(decision="deny", reason="no")] * (RACERS // 2)
    befores, errors = _race(RACERS, lambda i: decide(RunStore(store_path), run_id, call_id, decisions[i]))
    assert all(isinstance(e, StoreError) and "at the same moment" in str(e) for e in errors), errors
    fresh = [b for b in befores if b["decision"] is None]
    assert len(fresh) == 1, f"{len(fresh)} decisions each believed they replaced nothing"
    (row,) = pending(RunStore(store_path), run_id)
    assert row["decision"] in ("approve", "deny")
