"""The scheduler: real concurrency, start-on-ready, slot limits, priorities, failure policies,
cancellation, timeouts, retries, resume and the per-task hook."""

import asyncio
import time

import pytest
from crew_testkit import Recorder, dag, task_of

from crew import Crew, Task, bus
from crew.errors import CrewRunError, TaskTimeoutError
from crew.tasks.output import TaskOutput


def test_independent_tasks_run_at_the_same_time_up_to_max_concurrency():
    rec = Recorder(latency=0.05)
    agent = rec.agent()
    tasks = dag(agent, {f"t{i}": [] for i in range(12)})
    started = time.perf_counter()
    out = Crew(agents=[agent], tasks=tasks, process="graph", max_concurrency=4).kickoff()
    wall = time.perf_counter() - started
    assert [o.status for o in out.tasks_output] == ["done"] * 12
    assert rec.peak == 4
    # three waves of four: each wave starts when the previous one's slots free up
    starts = sorted(c.start for c in rec.calls)
    assert starts[3] - starts[0] < 0.03 and starts[4] - starts[0] >= 0.045
    assert wall < 12 * 0.05  # far from the serial sum


def test_a_task_starts_when_its_own_dependencies_finish_not_its_generation():
    rec = Recorder(latency=0.02, durations={"slow": 0.3})
    agent = rec.agent()
    tasks = dag(agent, {"slow": [], "fast": [], "after_fast": ["fast"], "after_both": ["slow", "after_fast"]})
    Crew(agents=[agent], tasks=tasks, process="graph").kickoff()
    after_fast, slow = rec.call("after_fast"), rec.call("slow")
    assert after_fast.start >= rec.call("fast").end
    assert after_fast.end < slow.end  # ran while "slow" (same generation as "fast") was still busy
    assert rec.call("after_both").start >= slow.end


def test_with_few_slots_the_longest_remaining_path_starts_first():
    rec = Recorder(latency=0.01)
    agent = rec.agent()
    tasks = dag(agent, {"short1": [], "short2": [], "chain1": [], "chain2": ["chain1"], "chain3": ["chain2"]})
    Crew(agents=[agent], tasks=tasks, process="graph", max_concurrency=1).kickoff()
    assert rec.tasks_called()[0] == "chain1"


def test_sequential_runs_one_task_at_a_time_in_order():
    rec = Recorder(latency=0.01)
    agent = rec.agent()
    tasks = dag(agent, {f"t{i}": [] for i in range(5)})
    Crew(agents=[agent], tasks=tasks, max_concurrency=8).kickoff()
    assert rec.tasks_called() == [f"t{i}" for i in range(5)] and rec.peak == 1


def test_stop_cancels_running_tasks_starts_nothing_else_and_keeps_finished_outputs():
    rec = Recorder(latency=0.01, durations={"long": 5.0, "failing": 0.05}, fail={"failing": 1})
    agent = rec.agent()
    tasks = dag(agent, {"first": [], "long": ["first"], "failing": ["first"], "after": ["failing"], "other": ["long"]})
    events = []
    unsubscribe = bus.subscribe(lambda e: events.append((e.type, e.data.get("task"))))
    started = time.perf_counter()
    try:
        with pytest.raises(CrewRunError) as info:
            Crew(agents=[agent], tasks=tasks, process="graph").kickoff()
    finally:
        unsubscribe()
    assert time.perf_counter() - started < 2  # "long" was cancelled, not waited for
    assert rec.running == 0  # and it unwound before kickoff raised: nothing left running
    error = info.value
    assert error.task == "failing" and "task 'failing' failed: RuntimeError: model failure on failing" in str(error)
    assert isinstance(error.__cause__, RuntimeError)
    statuses = {o.name: (o.status, o.error) for o in error.output.tasks_output}
    assert statuses["first"] == ("done", None)
    assert statuses["failing"][0] == "failed"
    assert statuses["long"] == ("skipped", "cancelled: the run stopped after task 'failing' failed")
    assert statuses["after"] == ("skipped", "not started: the run stopped after task 'failing' failed")
    assert statuses["other"][0] == "skipped"
    assert [o.name for o in error.output.tasks_output] == ["first", "long", "failing", "after", "other"]
    assert error.output.task("first").raw == "output of first"
    assert "long" not in [c.task for c in rec.calls]  # its model call never completed
    assert ("task.failed", "failing") in events and ("task.skipped", "long") in events
    assert ("run.done", None) in events


async def test_a_failure_and_a_success_finishing_together_are_both_recorded():
    async def reply(messages, tools):
        await asyncio.sleep(0)  # both finish in the same turn of the loop
        if task_of(messages) == "bad":
            raise RuntimeError("bad")
        return "good"

    from crew import Agent
    from crew.testing import FunctionModel

    agent = Agent(role="w", goal="g", llm=FunctionModel(reply))
    with pytest.raises(CrewRunError) as info:
        await Crew(
            agents=[agent], tasks=dag(agent, {"bad": [], "good": [], "later": ["good"]}), process="graph"
        ).kickoff_async()
    status = {o.name: o.status for o in info.value.output.tasks_output}
    assert status == {"bad": "failed", "good": "done", "later": "skipped"}


def test_continue_runs_everything_that_does_not_depend_on_the_failure():
    rec = Recorder(latency=0.01, fail={"bad": 1})
    agent = rec.agent()
    tasks = dag(agent, {"bad": [], "good": [], "child": ["bad"], "grandchild": ["child"], "free": ["good"]})
    out = Crew(agents=[agent], tasks=tasks, process="graph", on_error="continue").kickoff()
    status = {o.name: o.status for o in out.tasks_output}
    assert status == {"bad": "failed", "good": "done", "child": "skipped", "grandchild": "skipped", "free": "done"}
    assert out.task("grandchild").error == "not run: it depends on task 'bad', which failed"
    assert out.task("child").raw == "" and out.raw == "output of free"
    assert (out.task("child").agent, out.task("child").description) == ("Worker", "child")
    assert out.status == "failed"  # it returned, and says that a task failed


def test_kickoff_for_each_of_a_continue_crew_returns_the_outputs_of_failed_tasks_as_kickoff_does():
    rec = Recorder(fail={"bad": 1})
    agent = rec.agent()
    crew = Crew(agents=[agent], tasks=dag(agent, {"bad": [], "good": []}), process="graph", on_error="continue")
    outputs = crew.kickoff_for_each([{}, {}])
    assert sorted(o.status for o in outputs) == ["done", "failed"]  # "bad" fails once: in one of the two


def test_continue_in_the_sequential_process_skips_only_the_tasks_that_read_the_failure():
    """Coming later is not needing: a task whose context leaves the failed one out still runs,
    after it, and so do the tasks waiting their turn behind a skipped one."""
    rec = Recorder(fail={"bad": 1})
    agent = rec.agent()
    first = Task(name="first", description="first", agent=agent)
    bad = Task(name="bad", description="bad", agent=agent)
    own = Task(name="own", description="own", agent=agent, context=[first])
    reader = Task(name="reader", description="reader", agent=agent, context=[bad])
    last = Task(name="last", description="last", agent=agent, context=[own])
    everything = Task(name="everything", description="everything", agent=agent)  # reads all before it
    out = Crew(agents=[agent], tasks=[first, bad, own, reader, last, everything], on_error="continue").kickoff()
    status = {o.name: o.status for o in out.tasks_output}
    assert status == {
        "first": "done",
        "bad": "failed",
        "own": "done",
        "reader": "skipped",
        "last": "done",
        "everything": "skipped",
    }
    assert rec.tasks_called() == ["first", "bad", "own", "last"]  # still in declared order
    assert rec.call("last").context == ["own"]


def test_retries_rerun_a_failed_task_up_to_max_retries():
    rec = Recorder(fail={"flaky": 2})
    agent = rec.agent()
    flaky = Task(name="flaky", description="flaky", agent=agent, max_retries=2)
    out = Crew(agents=[agent], tasks=[flaky]).kickoff()
    assert out.task("flaky").status == "done" and out.task("flaky").attempts == 3
    rec.fail["flaky"] = 2
    flaky.max_retries = 1
    with pytest.raises(CrewRunError) as info:
        Crew(agents=[agent], tasks=[flaky]).kickoff()
    failed = info.value.output.task("flaky")
    assert failed.attempts == 2
    assert failed.usage.requests == 0  # the model raised before any turn completed


def test_the_tokens_of_failed_attempts_are_counted():
    from crew import Agent
    from crew.testing import FunctionModel
    from crew.tools import tool

    @tool
    def lookup() -> str:
        """Look something up."""
        return "found"

    turns = iter(["call", "raise", "answer"])

    def reply(messages, tools):
        turn = next(turns)
        if turn == "call":
            return [{"name": "lookup", "args": {}}]
        if turn == "raise":
            raise RuntimeError("connection reset")
        return "final"

    agent = Agent(role="w", goal="g", llm=FunctionModel(reply), tools=[lookup])
    task = Task(name="t", description="t", agent=agent, max_retries=1)
    out = Crew(agents=[agent], tasks=[task]).kickoff()
    assert out.raw == "final" and out.task("t").attempts == 2
    assert out.usage.requests == 2  # the first attempt's completed turn, then the retry's answer


def test_a_task_past_its_timeout_fails_with_a_timeout_error_and_can_be_retried():
    rec = Recorder(durations={"slow": 5.0})
    agent = rec.agent()
    slow = Task(name="slow", description="slow", agent=agent, timeout=0.1)
    started = time.perf_counter()
    with pytest.raises(CrewRunError) as info:
        Crew(agents=[agent], tasks=[slow]).kickoff()
    assert time.perf_counter() - started < 2
    assert isinstance(info.value.__cause__, TaskTimeoutError)
    assert "task 'slow' timed out after 0.1 s" in str(info.value)

    durations = iter([5.0, 0.0])  # the first attempt hangs, the retry is quick

    async def reply(messages, tools):
        await asyncio.sleep(next(durations))
        return "finally"

    from crew import Agent
    from crew.testing import FunctionModel

    agent2 = Agent(role="w", goal="g", llm=FunctionModel(reply))
    task = Task(name="retried", description="r", agent=agent2, timeout=0.1, max_retries=1)
    out = Crew(agents=[agent2], tasks=[task]).kickoff()
    assert out.raw == "finally" and out.task("retried").attempts == 2


def test_a_blocking_sync_tool_does_not_hold_back_a_timeout_or_a_stop():
    """A thread cannot be interrupted: kickoff reports the timeout (or the stop) at once and
    the abandoned tool finishes on its own, instead of kickoff waiting for the thread."""
    import threading

    from crew import Agent
    from crew.testing import FunctionModel
    from crew.tools import tool

    release, entered, left = threading.Event(), threading.Event(), threading.Event()

    @tool
    def stuck(x: str) -> str:
        """Blocks until released."""
        entered.set()
        release.wait(5)
        left.set()
        return "late"

    async def reply(messages, tools):
        if task_of(messages) == "bad":
            while not entered.is_set():  # fail only once the other task's tool is running
                await asyncio.sleep(0.005)
            raise RuntimeError("bad")
        return "unused" if messages[-1]["role"] == "tool" else [{"name": "stuck", "args": {"x": "1"}}]

    agent = Agent(role="w", goal="g", llm=FunctionModel(reply), tools=[stuck])
    try:
        with pytest.raises(CrewRunError, match=r"timed out after 0\.05 s"):
            Crew(agents=[agent], tasks=[Task(name="hang", description="hang", agent=agent, timeout=0.05)]).kickoff()
        assert entered.is_set() and not left.is_set()  # returned while the tool was still blocked
        entered.clear()
        tasks = [
            Task(name="hang", description="hang", agent=agent, context=[]),
            Task(name="bad", description="bad", agent=agent, context=[]),
        ]
        with pytest.raises(CrewRunError, match="task 'bad' failed") as info:
            Crew(agents=[agent], tasks=tasks, process="graph").kickoff()
        assert info.value.output.task("hang").status == "skipped" and not left.is_set()
    finally:
        release.set()


async def test_cancelling_a_kickoff_cancels_its_running_tasks():
    rec = Recorder(latency=10.0)
    agent = rec.agent()
    events = []
    unsubscribe = bus.subscribe(lambda e: events.append(e))
    run = asyncio.ensure_future(
        Crew(agents=[agent], tasks=dag(agent, {"a": [], "b": []}), process="graph").kickoff_async()
    )
    try:
        while rec.running < 2:
            await asyncio.sleep(0.01)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
    finally:
        unsubscribe()
    assert rec.running == 0 and rec.calls == []
    (done,) = [e for e in events if e.type == "run.done"]
    assert done.data["status"] == "cancelled"
    skipped = {e.data["task"]: e.data["error"] for e in events if e.type == "task.skipped"}
    assert skipped == {"a": "cancelled: the run was cancelled", "b": "cancelled: the run was cancelled"}
    assert done.data["duration"] > 0 and done.data["usage"]["requests"] == 0  # as a finished run says them


async def test_precomputed_outputs_are_not_rerun_and_the_hook_sees_every_output():
    rec = Recorder()
    agent = rec.agent()
    tasks = dag(agent, {"a": [], "b": ["a"], "c": ["b"]})
    crew = Crew(agents=[agent], tasks=tasks, process="graph")
    recorded = []

    async def on_task_done(out: TaskOutput):
        recorded.append((out.name, out.status))

    earlier = {"a": TaskOutput(name="a", raw="stored a"), "b": TaskOutput(name="b", status="failed")}
    out = await crew.kickoff_async(precomputed=earlier, on_task_done=on_task_done)
    assert rec.tasks_called() == ["b", "c"]  # "a" came from the store; the failed "b" runs again
    assert rec.call("b").context == ["a"] and out.task("a").raw == "stored a"
    assert recorded == [("b", "done"), ("c", "done")]


def test_events_announce_the_run_and_every_task():
    rec = Recorder()
    agent = rec.agent()
    events = []
    unsubscribe = bus.subscribe(lambda e: events.append(e))
    try:
        out = Crew(agents=[agent], tasks=dag(agent, {"a": [], "b": ["a"]}), name="evented").kickoff()
    finally:
        unsubscribe()
    mine = [
        (e.type, e.data.get("task")) for e in events if e.run_id == out.run_id and e.type.startswith(("run.", "task."))
    ]
    assert mine == [
        ("run.start", None),
        ("task.start", "a"),
        ("task.done", "a"),
        ("task.start", "b"),
        ("task.done", "b"),
        ("run.done", None),
    ]
    start = next(e for e in events if e.type == "run.start" and e.run_id == out.run_id)
    assert start.data["crew"] == "evented" and start.data["tasks"] == ["a", "b"]


def test_the_default_concurrency_bound_is_eight_and_on_error_is_stop():
    rec = Recorder(latency=0.03)
    agent = rec.agent()
    crew = Crew(agents=[agent], tasks=dag(agent, {f"t{i}": [] for i in range(12)}), process="graph")
    assert (crew.max_concurrency, crew.on_error, crew.process, crew.cache) == (8, "stop", "graph", True)
    crew.kickoff()
    assert rec.peak == 8


def test_async_execution_tasks_run_side_by_side_in_the_sequential_process():
    rec = Recorder(latency=0.1)
    agent = rec.agent()
    tasks = [
        Task(name=n, description=n, agent=agent, async_execution=n.startswith("async"))
        for n in ("first", "async_a", "async_b", "async_c", "join")
    ]
    out = Crew(agents=[agent], tasks=tasks).kickoff()
    calls = {n: rec.call(n) for n in ("first", "async_a", "async_b", "async_c", "join")}
    asyncs = [calls[n] for n in ("async_a", "async_b", "async_c")]
    assert all(c.start >= calls["first"].end for c in asyncs)
    assert max(c.start for c in asyncs) < min(c.end for c in asyncs)  # all three overlap
    assert calls["join"].start >= max(c.end for c in asyncs)
    assert calls["join"].context == ["first", "async_a", "async_b", "async_c"]
    assert rec.peak == 3
    assert out.raw == "output of join"
