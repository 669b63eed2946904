"""Which call a decision is for: call ids two tasks share, and edited arguments checked at once.

A call id is only unique within a conversation. The built-in test model used to give two
tasks running at once the same id for the same tool, and a real model (or a script) may
number its calls ``call_0`` in every conversation; the store then kept one of the two
waiting calls and a decision reached whichever task asked first. These tests run the real
``crew`` command (pause, approve, resume in separate processes) and the store's functions.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from crew import Agent, Approval, Crew, Task, tool
from crew.errors import AmbiguousCall, StoreError, ToolArgumentsError
from crew.models import complete_sync
from crew.store import RunStore
from crew.store import schema as store_schema
from crew.store.approvals import decide, paused_state, pending
from crew.testing import ChatRequest, FunctionModel, OpenAIServer, Reply, TestModel
from crew.tools.approval import check_edited_arguments

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_kit import run_crew, write  # isort: skip  (tests/cli holds the helpers that run the real command)

TOOLS = '''
from pathlib import Path
from crew import tool

LOG = Path(__file__).parent / "ran.log"

@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    with LOG.open("a") as fh:
        fh.write(path + "\\n")
    return f"deleted {path}"
'''

OPS = """
name: ops
process: graph
llm: {llm}
tools:
  delete_file: {{import: tools:delete_file, requires_approval: true}}
agents:
  ops: {{role: Operator, goal: Tidy disk one, tools: [delete_file]}}
  ops2: {{role: Second operator, goal: Tidy disk two, tools: [delete_file]}}
tasks:
  tidy: {{description: Remove what is not needed on disk one., expected_output: What was done., agent: ops}}
  tidy2: {{description: Remove what is not needed on disk two., expected_output: What was done., agent: ops2}}
"""

WAITING = re.compile(r"^  (\S+): delete_file\((.*)\) by '.*' in task '(\w+)'", re.M)


def ops_folder(tmp_path: Path, llm: str = "test") -> Path:
    """The audit's crew: one tool needing approval, used by two agents in two parallel tasks."""
    return write(tmp_path / "ops", {"crew.yaml": OPS.format(llm=llm), "tools.py": TOOLS})


def crew_cmd(folder: Path, *args: str) -> Any:
    """The real command, on the crew folder's own store (not the suite's shared one)."""
    return run_crew(*args, "--store", str(folder / "runs.db"), cwd=folder.parent, timeout=90)


def pause(folder: Path) -> tuple[str, dict[str, str], str]:
    """Kick the crew off without a terminal: (run, {task: call id}, stderr) of the paused run."""
    done = run_crew(
        "kickoff", str(folder), "--live-tools", "--store", str(folder / "runs.db"), cwd=folder.parent, timeout=90
    )
    assert done.returncode == 3, done.stderr
    run = re.search(r"then continue: crew resume (\w+)", done.stderr)
    assert run is not None, done.stderr
    calls = {task: call_id for call_id, _, task in WAITING.findall(done.stderr)}
    assert sorted(calls) == ["tidy", "tidy2"], done.stderr
    return run.group(1), calls, done.stderr


def shared_id_server() -> OpenAIServer:
    """A real-model stand-in that numbers its calls per conversation: every task's first call is ``call_0``."""

    def answer(request: ChatRequest) -> Reply:
        last = request.messages[-1]
        if last["role"] == "tool":
            return Reply.text(f"done: {last['content']}")
        disk = "one" if "disk one" in json.dumps(request.messages) else "two"
        return Reply.tools({"name": "delete_file", "args": {"path": f"/disk-{disk}/old.log"}, "id": "call_0"})

    return OpenAIServer(handler=answer)


def model_llm(server: OpenAIServer) -> str:
    return f'{{model: openai/gpt-4o-mini, api_base: "{server.url}", api_key: sk-test, num_retries: 0}}'


# -- the test model: an id per conversation -----------------------------------------------------

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather of a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def first_call_id(model: TestModel, task: str) -> str:
    messages = [{"role": "system", "content": "You are a forecaster."}, {"role": "user", "content": task}]
    return complete_sync(model, messages, [WEATHER]).tool_calls[0].id


def test_the_test_model_gives_each_conversation_its_own_ids_and_the_same_ones_again():
    model = TestModel()
    oslo, rome = first_call_id(model, "Weather in Oslo"), first_call_id(model, "Weather in Rome")
    assert oslo != rome  # the same tool, the same turn, another conversation
    assert first_call_id(TestModel(), "Weather in Oslo") == oslo  # deterministic: a new model, the same id
    assert first_call_id(TestModel(seed=1), "Weather in Oslo") != oslo


def test_the_audit_case_two_parallel_tasks_get_two_ids_and_each_decision_reaches_its_task(tmp_path):
    folder = ops_folder(tmp_path)
    run, calls, said = pause(folder)
    assert calls["tidy"] != calls["tidy2"] and "shared" not in said
    assert crew_cmd(folder, "approve", run, calls["tidy"], "--deny", "keep it").returncode == 0
    approved = crew_cmd(folder, "approve", run, calls["tidy2"])
    assert approved.returncode == 0, approved.stderr
    assert f"continue it with: crew resume {run}" in approved.stderr

    resumed = crew_cmd(folder, "resume", run, "--json")
    assert resumed.returncode == 0, resumed.stderr
    out = {t["name"]: t["raw"] for t in json.loads(resumed.stdout)["tasks_output"]}
    assert "delete_file: denied by a person: keep it" in out["tidy"]
    assert "delete_file: deleted example path" in out["tidy2"]
    assert (folder / "ran.log").read_text().count("\n") == 1  # only tidy2's call ran, once


# -- a model that repeats ids: refused until the task is named -------------------------------------


def test_a_shared_id_is_flagged_when_the_run_pauses_and_refused_alone_by_approve(tmp_path):
    with shared_id_server() as server:
        folder = ops_folder(tmp_path, model_llm(server))
        run, calls, said = pause(folder)
    assert calls == {"tidy": "call_0", "tidy2": "call_0"}  # both waiting calls were kept
    assert said.count("(id shared with another task: add --task)") == 2
    assert re.search(rf"approve with:  crew approve {run} call_0 --task tidy2? ", said), said

    ambiguous = crew_cmd(folder, "approve", run, "call_0", "--deny", "no")
    assert ambiguous.returncode == 2 and "Traceback" not in ambiguous.stderr
    assert "calls of 2 tasks of run" in ambiguous.stderr and "share the id call_0" in ambiguous.stderr
    assert f"crew approve {run} call_0 --task tidy   # delete_file" in ambiguous.stderr
    assert f"crew approve {run} call_0 --task tidy2   # delete_file" in ambiguous.stderr
    assert '{"path": "/disk-two/old.log"}' in ambiguous.stderr  # enough to tell which is which
    store = RunStore(folder / "runs.db")
    assert [row["decision"] for row in pending(store, store.run(run).id)] == [None, None]  # nothing decided


def test_the_store_decides_each_task_of_a_shared_id_and_hands_them_apart(tmp_path):
    def script(messages: list[dict[str, Any]], tools: Any) -> Any:
        if messages[-1]["role"] == "tool":
            return "said: " + messages[-1]["content"]
        return [{"name": "wipe", "args": {"path": "/srv"}, "id": "call_0"}]

    crew = two_task_crew(script, tmp_path / "runs.db")
    paused = crew.kickoff()
    assert sorted((p.task, p.call_id) for p in paused.pending_approvals) == [("one", "call_0"), ("two", "call_0")]
    store = RunStore(tmp_path / "runs.db")
    with pytest.raises(AmbiguousCall, match=r"share the id 'call_0' \('one', 'two'\)") as caught:
        decide(store, paused.run_id, "call_0", Approval.deny("no"))
    assert caught.value.tasks == ["one", "two"]
    with pytest.raises(StoreError, match=r"waits in tasks 'one', 'two', not in task 'three'"):
        decide(store, paused.run_id, "call_0", Approval.deny("no"), task="three")

    decide(store, paused.run_id, "call_0", Approval.deny("no"), task="one")
    checkpoints, decisions = paused_state(store, paused.run_id)
    assert sorted(checkpoints) == ["one", "two"]  # where each task stopped, neither lost
    assert decisions == {("one", "call_0"): Approval.deny("no")}  # filed under its task: never the other's

    _, decisions = paused_state(store, paused.run_id, {("two", "call_0"): True})
    assert decisions == {("one", "call_0"): Approval.deny("no"), ("two", "call_0"): True}
    with pytest.raises(AmbiguousCall, match=r"key each decision by \(task, call id\)"):
        paused_state(store, paused.run_id, {"call_0": True})
    with pytest.raises(StoreError, match=r"has no call 'call_9' waiting for approval"):
        paused_state(store, paused.run_id, {"call_9": True})


@tool(requires_approval=True)
def wipe(path: str) -> str:
    """Wipe a folder."""
    return f"wiped {path}"


def two_task_crew(script: Any, store: Path | None) -> Crew:
    """Two agents of one FunctionModel, each with a task asking for ``wipe``, run side by side."""
    model = FunctionModel(script)
    first = Agent(role="First", goal="g", llm=model, tools=[wipe])
    second = Agent(role="Second", goal="g", llm=model, tools=[wipe])
    tasks = [
        Task(name="one", description="Wipe one", expected_output="x", agent=first),
        Task(name="two", description="Wipe two", expected_output="x", agent=second),
    ]
    return Crew(agents=[first, second], tasks=tasks, process="graph", store=store)


def test_a_store_of_the_previous_version_keeps_its_waiting_calls_and_takes_shared_ids(tmp_path):
    path = tmp_path / "runs.db"
    conn = sqlite3.connect(path)
    for step in store_schema.MIGRATIONS[:2]:  # a file written before calls were keyed by task
        step(conn)
    conn.execute("PRAGMA user_version = 2")
    row = ("r1", "call_0", "one", "First", "wipe", "{}", "{}", "deny", "no", None, 1.0)
    conn.execute(f"INSERT INTO approvals ({store_schema._APPROVAL_COLUMNS}) VALUES ({', '.join('?' * 11)})", row)
    conn.commit()
    conn.close()

    store = RunStore(path)  # opening it migrates it
    assert [(r["call_id"], r["task"], r["decision"]) for r in pending(store, "r1")] == [("call_0", "one", "deny")]
    store.transaction(
        [
            (
                "INSERT INTO approvals (run_id, call_id, task, tool, checkpoint) VALUES (?, ?, ?, ?, ?)",
                ("r1", "call_0", "two", "wipe", "{}"),
            )
        ]
    )
    assert [r["task"] for r in pending(store, "r1")] == ["one", "two"]


# -- edited arguments: checked when the person decides ---------------------------------------------


def test_edited_arguments_that_do_not_fit_the_tool_are_refused_at_approve_time(tmp_path):
    folder = ops_folder(tmp_path)
    run, calls, _ = pause(folder)
    typo = crew_cmd(folder, "approve", run, calls["tidy"], "--args", '{"pth": "a.txt"}')
    assert typo.returncode == 2 and "Traceback" not in typo.stderr
    assert "pth: not an argument of the tool (did you mean 'path'?)" in typo.stderr
    assert "path: Field required" in typo.stderr and "Expected arguments: path (string, required)." in typo.stderr
    wrong = crew_cmd(folder, "approve", run, calls["tidy"], "--args", '{"path": ["a.txt"]}')
    assert wrong.returncode == 2 and "path: Input should be a valid string" in wrong.stderr
    store = RunStore(folder / "runs.db")
    assert all(row["decision"] is None for row in pending(store, store.run(run).id))  # nothing decided

    fixed = crew_cmd(folder, "approve", run, calls["tidy"], "--args", '{"path": "a.txt"}')
    assert fixed.returncode == 0, fixed.stderr
    assert crew_cmd(folder, "approve", run, calls["tidy2"], "--deny", "not this one").returncode == 0
    resumed = crew_cmd(folder, "resume", run)
    assert resumed.returncode == 0, resumed.stderr
    assert (folder / "ran.log").read_text() == "a.txt\n"


def test_edited_arguments_for_a_tool_that_cannot_be_found_are_kept_for_the_resume(tmp_path):
    folder = ops_folder(tmp_path)
    run, calls, _ = pause(folder)
    (folder / "crew.yaml").write_text((folder / "crew.yaml").read_text().replace("tools:delete_file", "tools:gone"))
    kept = crew_cmd(folder, "approve", run, calls["tidy"], "--args", '{"pth": "a.txt"}')
    assert kept.returncode == 0, kept.stderr
    assert "note: the new arguments were not checked against 'delete_file'" in kept.stderr
    assert "does not load" in kept.stderr


def test_check_edited_arguments_returns_the_validated_arguments_or_names_each_problem():
    assert check_edited_arguments(wipe, {"path": "/srv"}) == {"path": "/srv"}
    with pytest.raises(ToolArgumentsError) as caught:
        check_edited_arguments(wipe, {"paht": "/srv", "force": True})
    assert caught.value.problems == {
        "paht": "not an argument of the tool (did you mean 'path'?)",
        "force": "not an argument of the tool",
        "path": "Field required",
    }
    assert str(caught.value).startswith("Tool 'wipe' cannot run with these arguments:")


# -- each task's own decision, at resume -----------------------------------------------------------


def test_naming_the_task_decides_each_call_of_a_shared_id_and_resume_applies_each(tmp_path):
    with shared_id_server() as server:
        folder = ops_folder(tmp_path, model_llm(server))
        run, _, _ = pause(folder)
        denied = crew_cmd(folder, "approve", run, "call_0", "--task", "tidy", "--deny", "not disk one")
        assert denied.returncode == 0, denied.stderr
        assert f"call call_0 in task 'tidy' of run {run} denied" in denied.stderr
        assert "still waiting: call_0 (task 'tidy2')" in denied.stderr
        assert crew_cmd(folder, "approve", run, "call_0", "--task", "tidy2").returncode == 0
        resumed = crew_cmd(folder, "resume", run, "--json")
    assert resumed.returncode == 0, resumed.stderr
    out = {t["name"]: t["raw"] for t in json.loads(resumed.stdout)["tasks_output"]}
    assert out == {"tidy": "done: denied by a person: not disk one", "tidy2": "done: deleted /disk-two/old.log"}
    assert (folder / "ran.log").read_text() == "/disk-two/old.log\n"


def shared_id_script(messages: list[dict[str, Any]], tools: Any) -> Any:
    if messages[-1]["role"] == "tool":
        return "said: " + messages[-1]["content"]
    return [{"name": "wipe", "args": {"path": "/srv"}, "id": "call_0"}]


def test_python_resume_takes_decisions_by_task_and_call_id_and_refuses_a_shared_id_alone(tmp_path):
    paused = two_task_crew(shared_id_script, tmp_path / "runs.db").kickoff()
    again = two_task_crew(shared_id_script, tmp_path / "runs.db")
    with pytest.raises(AmbiguousCall, match=r"share the id 'call_0' \('one', 'two'\)"):
        again.resume(paused.run_id, approvals={"call_0": True})
    out = again.resume(paused.run_id, approvals={("one", "call_0"): Approval.deny("no"), ("two", "call_0"): True})
    assert out.status == "done"
    assert {t.name: t.raw for t in out.tasks_output} == {
        "one": "said: denied by a person: no",
        "two": "said: wiped /srv",
    }


def test_an_in_memory_continuation_refuses_a_shared_id_alone_and_takes_it_by_task():
    crew = two_task_crew(shared_id_script, None)
    paused = crew.kickoff()
    with pytest.raises(AmbiguousCall, match=r"key each decision by \(task, call id\)"):
        crew.kickoff(checkpoints=paused.checkpoints, approvals={"call_0": False})
    out = crew.kickoff(checkpoints=paused.checkpoints, approvals={("one", "call_0"): True, ("two", "call_0"): False})
    assert {t.name: t.raw for t in out.tasks_output} == {
        "one": "said: wiped /srv",
        "two": "said: denied by a person: no reason given",
    }
