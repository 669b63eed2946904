"""Tools that need a person's approval: approver callables, deny, edit, per-call rules, pause and continue.

The executor's rules are checked exactly: a denied or pending call takes no usage slot and
is never cached; an approved call runs once; the turn that asked is never asked again.
"""

from __future__ import annotations

from typing import Any

import pytest

from crew import Agent, Approval, ApprovalRequest, Crew, Task, tool
from crew.config import load_project
from crew.errors import ConfigError
from crew.stream import ApprovalRequested
from crew.testing import FunctionModel
from crew.tools import ToolExecutor

DELETED: list[str] = []


@tool(requires_approval=True, max_usage_count=1)
def delete_file(path: str) -> str:
    """Delete a file."""
    DELETED.append(path)
    return f"deleted {path}"


@tool(requires_approval=lambda call: call.args["path"].startswith("/etc"))
def write_file(path: str) -> str:
    """Write a file; only system paths need a person."""
    DELETED.append(f"write {path}")
    return f"wrote {path}"


@tool
def list_files(folder: str) -> str:
    """List a folder."""
    DELETED.append(f"list {folder}")
    return "a.txt b.txt"


class Script:
    """A model that asks for ``calls`` on its first turn and then reports what the tools said."""

    def __init__(self, calls: list[dict[str, Any]]) -> None:
        self.calls = calls
        self.turns = 0

    def __call__(self, messages: list[dict[str, Any]], tools: Any) -> Any:
        self.turns += 1
        if messages[-1]["role"] == "tool":
            observed = [m["content"] for m in messages if m["role"] == "tool"]
            return "observed: " + " | ".join(observed)
        return [dict(call) for call in self.calls]


def one_task_crew(script: Script, tools: list[Any], **crew_kw: Any) -> Crew:
    agent = Agent(role="Operator", goal="tidy up", llm=FunctionModel(script), tools=tools)
    task = Task(name="tidy", description="Tidy the disk", expected_output="what was done", agent=agent)
    return Crew(agents=[agent], tasks=[task], **crew_kw)


def setup_function() -> None:
    DELETED.clear()


def test_an_approver_that_says_yes_lets_the_call_run_once():
    seen: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> bool:
        seen.append(request)
        return True

    script = Script([{"name": "delete_file", "args": {"path": "/tmp/a"}}])
    out = one_task_crew(script, [delete_file], approver=approver).kickoff()
    assert out.status == "done" and out.raw == "observed: deleted /tmp/a"
    assert DELETED == ["/tmp/a"]
    assert [(r.tool, r.args, r.agent, r.task) for r in seen] == [
        ("delete_file", {"path": "/tmp/a"}, "Operator", "tidy")
    ]
    assert out.tool_stats["delete_file"].runs == 1


def test_a_denied_call_is_an_observation_takes_no_slot_and_is_never_cached():
    asked: list[str] = []

    async def approver(request: ApprovalRequest) -> Approval:  # async approvers are awaited
        asked.append(request.call_id)
        return Approval.deny("not on a Friday") if len(asked) == 1 else Approval.approve()

    same = {"name": "delete_file", "args": {"path": "/tmp/a"}}
    agent_script = Script([same])
    crew = one_task_crew(agent_script, [delete_file], approver=approver)
    crew.tasks.append(Task(name="again", description="Tidy again", expected_output="x", agent=crew.tasks[0].agent))
    out = crew.kickoff()
    first, second = out.tasks_output
    assert first.raw == "observed: denied by a person: not on a Friday"
    assert second.raw == "observed: deleted /tmp/a"  # not served from a cached denial; the slot was still free
    assert len(asked) == 2 and DELETED == ["/tmp/a"]
    stats = out.tool_stats["delete_file"]
    assert (stats.runs, stats.cache_hits, stats.refused) == (1, 0, 0)


def test_edited_arguments_are_validated_and_run_instead_of_the_models():
    script = Script([{"name": "delete_file", "args": {"path": "/"}}])
    out = one_task_crew(script, [delete_file], approver=lambda r: Approval.edit({"path": "/tmp/only-this"})).kickoff()
    assert out.raw == "observed: deleted /tmp/only-this" and DELETED == ["/tmp/only-this"]

    bad = one_task_crew(Script([{"name": "delete_file", "args": {"path": "/"}}]), [delete_file])
    out = bad.kickoff(approver=lambda r: Approval.edit({"folder": "x"}))
    assert "path" in out.raw and "Field required" in out.raw and DELETED == ["/tmp/only-this"]


def test_a_per_call_rule_asks_only_for_the_calls_it_picks():
    asked: list[str] = []
    script = Script(
        [{"name": "write_file", "args": {"path": "/tmp/x"}}, {"name": "write_file", "args": {"path": "/etc/x"}}]
    )
    out = one_task_crew(script, [write_file], approver=lambda r: asked.append(r.args["path"]) or True).kickoff()
    assert asked == ["/etc/x"]
    assert sorted(DELETED) == ["write /etc/x", "write /tmp/x"]
    assert out.raw == "observed: wrote /tmp/x | wrote /etc/x"


async def test_without_an_approver_the_run_pauses_and_continues_where_it_stopped():
    script = Script(
        [{"name": "list_files", "args": {"folder": "/tmp"}}, {"name": "delete_file", "args": {"path": "/tmp/a"}}]
    )
    crew = one_task_crew(script, [list_files, delete_file])
    events = [e async for e in crew.astream()]
    paused = events[-1]
    assert paused.status == "paused" and script.turns == 1
    (request,) = paused.pending_approvals
    assert (request.tool, request.args, request.task) == ("delete_file", {"path": "/tmp/a"}, "tidy")
    assert [e.call_id for e in events if isinstance(e, ApprovalRequested)] == [request.call_id]
    assert paused.tasks_output[0].status == "paused"
    assert DELETED == ["list /tmp"]  # the call that needed nobody ran; the other waits
    assert paused.tool_stats["delete_file"].runs == 0
    checkpoint = paused.checkpoints["tidy"]
    restored = type(checkpoint).model_validate_json(checkpoint.model_dump_json())  # plain data, as a store keeps it

    out = await crew.kickoff_async(checkpoints={"tidy": restored}, approvals={request.call_id: True})
    assert out.status == "done"
    assert script.turns == 2  # the turn that asked for the tools was not asked again
    assert DELETED == ["list /tmp", "/tmp/a"]  # each call ran once in all
    assert out.raw == "observed: a.txt b.txt | deleted /tmp/a"
    assert [r.name for r in out.tasks_output[0].tool_calls] == ["list_files", "delete_file"]


async def test_a_run_continued_without_a_decision_pauses_again_at_the_same_call():
    script = Script([{"name": "delete_file", "args": {"path": "/tmp/a"}}])
    crew = one_task_crew(script, [delete_file])
    first = await crew.kickoff_async()
    again = await crew.kickoff_async(checkpoints=first.checkpoints)
    assert again.status == "paused" and script.turns == 1
    assert [p.call_id for p in again.pending_approvals] == [p.call_id for p in first.pending_approvals]
    denied = await crew.kickoff_async(
        checkpoints=again.checkpoints, approvals={first.pending_approvals[0].call_id: Approval.deny("no")}
    )
    assert denied.raw == "observed: denied by a person: no" and DELETED == []


async def test_a_paused_task_holds_its_readers_while_independent_tasks_finish():
    script = Script([{"name": "delete_file", "args": {"path": "/tmp/a"}}])
    gated = Agent(role="Operator", goal="g", llm=FunctionModel(script), tools=[delete_file])
    free = Agent(role="Writer", goal="g", llm=FunctionModel(lambda m, t: "written"))
    tidy = Task(name="tidy", description="t", expected_output="x", agent=gated)
    note = Task(name="note", description="n", expected_output="x", agent=free)
    report = Task(name="report", description="r", expected_output="x", agent=free, context=[tidy])
    out = await Crew(agents=[gated, free], tasks=[tidy, note, report], process="graph").kickoff_async()
    statuses = {t.name: t.status for t in out.tasks_output}
    assert statuses == {"tidy": "paused", "note": "done", "report": "skipped"}
    assert "paused for a person's approval" in (out.task("report").error or "")


async def test_a_batch_kickoff_waiting_for_approval_is_paused_not_done():
    from contextlib import aclosing

    from crew.backends import BatchStatus, for_each

    script = Script([{"name": "delete_file", "args": {"path": "/tmp/{topic}"}}])
    crew = one_task_crew(script, [delete_file])
    status = BatchStatus()
    async with aclosing(for_each(crew, [{"topic": "a"}, {"topic": "b"}], status=status)) as results:
        rows = [r async for r in results]
    assert sorted(r.status for r in rows) == ["paused", "paused"]
    assert all(r.output is not None and r.output.pending_approvals for r in rows)
    assert (status.done, status.paused, status.finished) == (0, 2, 2) and "2 paused" in status.summary()
    assert DELETED == []  # nothing ran without a person's yes


def test_a_yaml_tool_takes_a_function_that_decides_per_call(tmp_path):
    (tmp_path / "tools.py").write_text(
        "from crew import tool\n\n"
        "@tool\ndef remove(path: str) -> str:\n    '''Remove a file.'''\n    return f'removed {path}'\n\n"
        "def outside_tmp(call) -> bool:\n    return not call.args['path'].startswith('/tmp/')\n"
    )
    crew_yaml = (
        "llm: test\ntools:\n  remove: {import: tools:remove, requires_approval: tools:outside_tmp}\n"
        "agents:\n  ops: {role: Ops, goal: Tidy, tools: [remove]}\n"
        "tasks:\n  tidy: {description: Tidy, agent: ops}\n"
    )
    (tmp_path / "crew.yaml").write_text(crew_yaml)
    remove = load_project(tmp_path).tools["remove"]
    executor = ToolExecutor([remove])
    assert executor.execute({"name": "remove", "args": {"path": "/tmp/a"}}).content == "removed /tmp/a"
    assert executor.execute({"name": "remove", "args": {"path": "/etc/passwd"}}).pending
    (tmp_path / "crew.yaml").write_text(crew_yaml.replace("tools:outside_tmp", "tools:outside"))
    with pytest.raises(ConfigError) as info:
        load_project(tmp_path)
    assert "crew.yaml:3: tools.remove.requires_approval:" in "\n".join(info.value.errors)
    assert "outside" in "\n".join(info.value.errors)
