"""The run store through the Python API: what a run records, replay, resume, budgets, bad files."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections import Counter
from typing import Any

import pytest

from crew import Agent, BudgetExceededError, Crew, CrewRunError, RunStore, StoreError, Task, tool
from crew.store import schema
from crew.testing import FunctionModel
from crew.tools.cache import SQLiteCache


def _task_of(messages: list[dict[str, Any]]) -> str:
    text = next(m["content"] for m in messages if m["role"] == "user")
    return re.search(r"^Task: (\S+)", text, re.M).group(1)  # type: ignore[union-attr]


@tool
def lookup(term: str) -> str:
    """Look a term up."""
    return f"definition of {term}"


class Script:
    """A model function: calls ``lookup`` once in task b, then answers "<task> ok"; counts calls by task."""

    def __init__(self, fail: set[str] | None = None) -> None:
        self.calls: Counter[str] = Counter()
        self.fail = fail or set()

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        task = _task_of(messages)
        self.calls[task] += 1
        if task in self.fail:
            raise RuntimeError(f"model down while answering {task}")
        if task == "b" and tools and not any(m["role"] == "tool" for m in messages):
            return [{"name": "lookup", "args": {"term": "bees"}}]
        return f"{task} ok"


def _crew(script: Script, store: Any, *, process: str = "sequential", **kw: Any) -> Crew:
    agent = Agent(role="Analyst", goal="answer", llm=FunctionModel(script), tools=[lookup])
    tasks = [Task(name=n, description=n + " about {topic}", expected_output="a line", agent=agent) for n in "abcd"]
    return Crew(agents=[agent], tasks=tasks, store=store, process=process, **kw)


def test_a_kickoff_records_the_run_its_tasks_and_every_model_and_tool_call(tmp_path) -> None:
    script = Script()
    crew = _crew(script, tmp_path / "runs.db")
    out = crew.kickoff({"topic": "bees"})

    detail = RunStore(tmp_path / "runs.db").detail(out.run_id)
    run = detail.run
    assert (run.id, run.status, run.crew, run.mode, run.inputs) == (
        out.run_id,
        "done",
        "crew",
        "kickoff",
        {"topic": "bees"},
    )
    assert run.usage == out.usage and run.finished_at is not None and run.finished_at >= run.started_at
    assert [(t.name, t.status, t.raw, t.agent) for t in detail.tasks] == [
        (n, "done", f"{n} ok", "Analyst") for n in "abcd"
    ]
    assert [t.usage for t in detail.tasks] == [o.usage for o in out.tasks_output]
    assert [c.task for c in detail.model_calls] == ["a", "b", "b", "c", "d"]
    first = detail.model_calls[0]
    assert first.model == "function" and first.status == "success" and first.agent == "Analyst"
    assert first.message_count == 2 and "a about bees" in (first.messages or "") and first.reply == "a ok"
    assert first.usage.total_tokens > 0 and first.message_chars == len(first.messages or "")
    (call,) = detail.tool_calls
    assert (call.task, call.tool, call.args, call.result, call.status, call.cached) == (
        "b",
        "lookup",
        {"term": "bees"},
        "definition of bees",
        "success",
        False,
    )


def test_messages_are_capped_in_the_store_but_their_size_is_kept(tmp_path) -> None:
    store = RunStore(tmp_path / "runs.db", max_text=50)
    crew = _crew(Script(), store)
    out = crew.kickoff({"topic": "x" * 500})
    call = store.model_calls(out.run_id)[0]
    assert call.messages is not None and call.messages.startswith('[{"role": "system"')
    assert len(call.messages) < 120 and "more characters not kept" in call.messages
    assert call.message_chars > 500


def test_replay_from_a_middle_task_reruns_exactly_it_and_its_dependants(tmp_path) -> None:
    first = Script()
    crew = _crew(first, tmp_path / "runs.db", process="graph")
    # graph: a -> b -> d, a -> c (c does not read b)
    a, b, c, d = crew.tasks
    b.context, c.context, d.context = [a], [a], [b]
    original = crew.kickoff({"topic": "bees"})

    again = Script()
    for task in crew.tasks:
        task.agent.llm = FunctionModel(again)
    replayed = crew.replay(original.run_id, from_task="b")

    assert again.calls == Counter({"b": 2, "d": 1})  # b: the tool turn and the answer
    assert replayed.continued_from == original.run_id and replayed.run_id != original.run_id
    assert [o.raw for o in replayed.tasks_output] == [o.raw for o in original.tasks_output]
    assert replayed.usage.requests == 3  # only the new work counts
    tasks = {t.name: t for t in crew.run_store().tasks(replayed.run_id)}
    assert {n for n, t in tasks.items() if t.reused} == {"a", "c"}
    assert tasks["a"].usage.total_tokens == 0 and tasks["b"].usage.total_tokens > 0
    run = crew.run_store().run(replayed.run_id)
    assert (run.mode, run.continued_from, run.from_task) == ("replay", original.run_id, "b")


def test_resume_after_a_failure_runs_only_the_unfinished_tasks(tmp_path) -> None:
    broken = Script(fail={"c"})
    crew = _crew(broken, tmp_path / "runs.db")
    with pytest.raises(CrewRunError) as caught:
        crew.kickoff({"topic": "bees"})
    failed_id = caught.value.output.run_id
    store = crew.run_store()
    assert store.run(failed_id).status == "failed"
    assert [t.status for t in store.tasks(failed_id)] == ["done", "done", "failed", "skipped"]

    fixed = Script()
    for task in crew.tasks:
        task.agent.llm = FunctionModel(fixed)
    resumed = crew.resume()  # the latest unfinished run; its inputs are reused

    assert fixed.calls == Counter({"c": 1, "d": 1})
    assert resumed.continued_from == failed_id and resumed.raw == "d ok"
    assert resumed.usage.requests == 2
    assert store.run(resumed.run_id).inputs == {"topic": "bees"}
    with pytest.raises(StoreError, match="no unfinished run"):
        crew.resume()  # the failed run was continued, the resumed one finished


def test_a_failed_resume_overtaken_by_a_finished_one_is_not_resumed_again(tmp_path) -> None:
    """Two resumes of one failed run, the first failed, the second done: `crew resume` picked the
    failed first resume and ran its tasks once more."""
    crew = _crew(Script(fail={"c"}), tmp_path / "runs.db")
    with pytest.raises(CrewRunError) as caught:
        crew.kickoff({"topic": "bees"})
    failed_id = caught.value.output.run_id
    with pytest.raises(CrewRunError):
        crew.resume(failed_id)  # still broken
    fixed = Script()
    for task in crew.tasks:
        task.agent.llm = FunctionModel(fixed)
    assert crew.resume(failed_id).raw == "d ok"  # the same failed run again, by its id: done
    with pytest.raises(StoreError, match="no unfinished run"):
        crew.resume()
    assert fixed.calls == Counter({"c": 1, "d": 1})


def test_resume_refuses_when_a_finished_task_changed_and_names_it(tmp_path) -> None:
    crew = _crew(Script(fail={"d"}), tmp_path / "runs.db")
    with pytest.raises(CrewRunError):
        crew.kickoff({"topic": "bees"})
    crew.tasks[1].description = "b about {topic}, in French"
    with pytest.raises(StoreError, match=r"cannot resume run \w+: task 'b' changed since that run"):
        crew.resume()
    crew.tasks[1].description = "b about {topic}"
    with pytest.raises(StoreError, match="task 'a' changed"):
        crew.resume(inputs={"topic": "wasps"})  # new inputs change what the finished tasks were asked
    crew.tasks[3].description = "d, reworded: it has no stored output, so it may change"
    for task in crew.tasks:
        task.agent.llm = FunctionModel(Script())
    assert crew.resume().raw == "d, ok"


def test_budget_stops_before_the_call_that_would_start_past_it_and_resume_goes_on(tmp_path) -> None:
    script = Script()
    crew = _crew(script, tmp_path / "runs.db", max_tokens=1)
    with pytest.raises(BudgetExceededError) as caught:
        crew.kickoff({"topic": "bees"})
    error = caught.value
    assert script.calls == Counter({"a": 1})  # the first call started under budget; the second never did
    assert error.budget == "max_tokens" and error.limit == 1 and error.task == "b"
    assert error.spent.total_tokens > 1
    assert re.search(
        r"budget max_tokens=1 tokens reached before a model call of agent 'Analyst' for task 'b'", str(error)
    )
    assert f"spent {error.spent.total_tokens:,} tokens" in str(error)
    store = crew.run_store()
    stopped = store.run(error.output.run_id)
    assert stopped.status == "failed" and "max_tokens" in (stopped.error or "")
    assert [t.status for t in store.tasks(stopped.id)] == ["done", "failed", "skipped", "skipped"]

    crew.max_tokens = error.spent.total_tokens + 1  # one more call's worth: the budget covers the first run too
    with pytest.raises(BudgetExceededError, match=r"of which \d+ tokens .* were spent by run"):
        crew.resume()
    assert script.calls == Counter({"a": 1, "b": 1})
    crew.max_tokens = None
    crew.max_cost = 10.0
    assert crew.resume().raw == "d ok"


def test_budget_without_a_store_and_cost_budget(tmp_path) -> None:
    script = Script()
    crew = _crew(script, None, max_cost=1e-9)
    crew.tasks[0].agent.llm = FunctionModel(lambda m, t: "priced", model="gpt-4o-mini")
    # FunctionModel reports no cost: a cost budget is never reached by free calls
    out = crew.kickoff({"topic": "x"})
    assert out.raw == "priced" and out.usage.cost == 0.0


def test_eight_concurrent_tasks_write_every_row(tmp_path) -> None:
    async def slow(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        await asyncio.sleep(0.01)
        if tools and not any(m["role"] == "tool" for m in messages):
            return [{"name": "lookup", "args": {"term": _task_of(messages)}}]
        return "ok"

    agent = Agent(role="A", goal="g", llm=FunctionModel(slow), tools=[lookup])
    tasks = [Task(name=f"t{i}", description=f"t{i}", agent=agent, context=[]) for i in range(8)]
    crew = Crew(agents=[agent], tasks=tasks, process="graph", max_concurrency=8, store=tmp_path / "runs.db")
    outs = [crew.kickoff() for _ in range(3)]
    store = crew.run_store()
    for out in outs:
        detail = store.detail(out.run_id)
        assert [t.status for t in detail.tasks] == ["done"] * 8
        assert sorted(c.task or "" for c in detail.model_calls) == sorted([f"t{i}" for i in range(8)] * 2)
        assert sorted(c.args["term"] for c in detail.tool_calls) == sorted(f"t{i}" for i in range(8))
    with sqlite3.connect(tmp_path / "runs.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM model_calls").fetchone()[0] == 48


def test_the_tool_cache_shares_the_store_file_either_way_round(tmp_path) -> None:
    path = tmp_path / "runs.db"
    cache = SQLiteCache(path)
    cache.set("k", {"v": 1})
    crew = _crew(Script(), path, cache=cache)
    out = crew.kickoff({"topic": "bees"})
    assert cache.get("k") == (True, {"v": 1})
    assert crew.run_store().run(out.run_id).status == "done"
    other = tmp_path / "other.db"
    RunStore(other).close()
    with SQLiteCache(other) as again:
        again.set("x", 1)
    assert RunStore(other).runs() == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"this is not a database at all, just text\n" * 20, "not an SQLite database"),
        (b"SQLite format 3\x00" + b"\xff" * 2000, "not a usable crew run store"),
    ],
)
def test_a_corrupt_file_is_a_clear_error_naming_it(tmp_path, content: bytes, message: str) -> None:
    path = tmp_path / "runs.db"
    path.write_bytes(content)
    with pytest.raises(StoreError, match=message) as caught:
        RunStore(path)
    assert str(path) in str(caught.value)
    crew = _crew(Script(), path)
    with pytest.raises(StoreError, match=re.escape(str(path))):
        crew.kickoff({"topic": "bees"})


def test_a_foreign_database_is_refused_not_written_into(tmp_path) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER)")
    with pytest.raises(StoreError, match=r"is not a crew run store \(it holds other tables: customers\)"):
        RunStore(path)
    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"customers"}


def test_a_store_from_a_newer_crew_is_refused(tmp_path) -> None:
    path = tmp_path / "runs.db"
    RunStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError, match="written by a newer crew"):
        RunStore(path)


def test_a_later_schema_version_migrates_an_earlier_store_keeping_its_runs(tmp_path, monkeypatch) -> None:
    path = tmp_path / "runs.db"
    crew = _crew(Script(), path)
    out = crew.kickoff({"topic": "bees"})
    crew.run_store().close()

    def add_notes(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE runs ADD COLUMN notes TEXT DEFAULT 'migrated'")

    before = len(schema.MIGRATIONS)
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, add_notes])
    store = RunStore(path)
    assert store.run(out.run_id).status == "done"
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == before + 1
        assert conn.execute("SELECT notes FROM runs").fetchone()[0] == "migrated"


def test_run_references_resolve_by_prefix_and_unknown_ones_are_clear(tmp_path) -> None:
    crew = _crew(Script(), tmp_path / "runs.db")
    out = crew.kickoff({"topic": "bees"})
    store = crew.run_store()
    assert store.run(out.run_id[:6]).id == out.run_id
    assert store.run().id == out.run_id
    with pytest.raises(StoreError, match="no run 'zzz'"):
        store.run("zzz")
    with pytest.raises(StoreError, match=r"run .* finished: nothing to resume"):
        crew.resume(out.run_id)
    with pytest.raises(StoreError, match=r"no task 'nope' in crew 'crew' \(its tasks: a, b, c, d\)"):
        crew.replay(out.run_id, from_task="nope")
    with pytest.raises(Exception, match="needs a run store"):
        _crew(Script(), None).resume()


def test_a_store_that_cannot_write_says_so_in_an_event_and_the_run_goes_on(tmp_path) -> None:
    from crew import bus

    store = RunStore(tmp_path / "runs.db")
    crew = _crew(Script(), store)
    crew.tasks[0].callback = lambda out: store._conn.close()  # the disk went away after task a
    errors = []
    unsubscribe = bus.subscribe(lambda e: errors.append(e) if e.type == "store.error" else None)
    try:
        out = crew.kickoff({"topic": "bees"})
    finally:
        unsubscribe()
    assert [o.status for o in out.tasks_output] == ["done"] * 4 and out.raw == "d ok"
    assert errors and all(e.run_id == out.run_id and str(store.path) == e.data["path"] for e in errors)
    assert "closed database" in errors[0].data["error"]


def test_a_run_still_running_is_not_resumed_from_under_its_process(tmp_path) -> None:
    import subprocess
    import sys

    crew = _crew(Script(fail={"b"}), tmp_path / "runs.db")
    with pytest.raises(CrewRunError) as caught:
        crew.kickoff({"topic": "bees"})
    store = crew.run_store()
    run_id = caught.value.output.run_id
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # a live process of this host
    try:
        store.execute("UPDATE runs SET status = 'running', pid = ? WHERE id = ?", (other.pid, run_id))
        with pytest.raises(StoreError, match=rf"run {run_id[:12]} is still running \(process {other.pid}\)"):
            crew.resume(run_id)
        with pytest.raises(StoreError, match="no unfinished run"):
            crew.resume()
    finally:
        other.kill()
        other.wait()
    assert store.run(run_id).status == "interrupted"  # its process is gone
    for task in crew.tasks:
        task.agent.llm = FunctionModel(Script())
    assert crew.resume().continued_from == run_id


def test_a_run_killed_with_the_same_pid_as_this_process_is_resumable(tmp_path) -> None:
    """In a container crew is PID 1 in every process: a "running" row with this process's pid is
    alive only while this process records that run."""
    import os

    crew = _crew(Script(fail={"b"}), tmp_path / "runs.db")
    with pytest.raises(CrewRunError) as caught:
        crew.kickoff({"topic": "bees"})
    store = crew.run_store()
    run_id = caught.value.output.run_id
    store.execute("UPDATE runs SET status = 'running', pid = ? WHERE id = ?", (os.getpid(), run_id))
    assert store.run(run_id).status == "interrupted"
    for task in crew.tasks:
        task.agent.llm = FunctionModel(Script())
    assert crew.resume().continued_from == run_id


def test_a_full_disk_is_reported_once_by_its_name_and_the_run_is_never_recorded_done(tmp_path) -> None:
    from crew import bus

    store = RunStore(tmp_path / "runs.db")
    crew = _crew(Script(), store)

    def fill_the_disk(out: Any) -> None:
        conn = store._conn
        conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0] + 2}")
        with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
            for i in range(10_000):
                conn.execute("INSERT INTO crew_meta VALUES (?, ?)", (f"filler {i}", "x" * 2000))

    crew.tasks[0].callback = fill_the_disk
    errors = []
    unsubscribe = bus.subscribe(lambda e: errors.append(e) if e.type == "store.error" else None)
    try:
        out = crew.kickoff({"topic": "bees " * 2000})  # every model call's row needs new pages
    finally:
        unsubscribe()
    assert [o.status for o in out.tasks_output] == ["done"] * 4  # the run itself goes on
    assert len(errors) == 1, [e.data["error"] for e in errors]
    assert "database or disk is full" in errors[0].data["error"] and "rollback" not in errors[0].data["error"]
    store._conn.execute("PRAGMA max_page_count = 1000000")
    run = store.run(out.run_id)
    assert run.status in ("interrupted", "failed")  # never `done` with its tasks' rows missing
    assert "pending" in [t.status for t in store.tasks(out.run_id)]  # what `crew resume` will redo
    from crew.store.recorder import lost_writes

    assert "database or disk is full" in lost_writes.pop(out.run_id)  # what the CLI says after the run


def test_a_crew_with_an_open_store_pickles_and_opens_the_same_file_again(tmp_path) -> None:
    import pickle  # Crew(backend="ray") ships the crew the same way (with cloudpickle)

    agent = Agent(role="A", goal="g", llm="test")
    crew = Crew(agents=[agent], tasks=[Task(description="d", agent=agent)], store=tmp_path / "runs.db")
    out = crew.kickoff()
    store = pickle.loads(pickle.dumps(crew)).run_store()
    assert store.path == tmp_path / "runs.db" and store.run().id == out.run_id
