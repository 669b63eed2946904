"""The Ray backend on one local Ray instance (2 CPUs) started once for this module.

Kickoffs as Ray tasks give the local backend's outputs; a graph's tasks run as Ray tasks
with usage limits and the cache exact across workers; a worker killed mid-task is retried
and its result recorded once; an unshippable tool is named before anything is sent; the
CLI runs a batch on the cluster; and no Ray process tries to reach past loopback.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import aclosing
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

import shipping_kit as kit  # noqa: E402

from crew import Agent, Crew, Task, tool  # noqa: E402
from crew.backends import for_each  # noqa: E402
from crew.backends import ray as ray_backend  # noqa: E402
from crew.errors import (  # noqa: E402
    ConfigError,
    CrewRunError,
    NotShippableError,
)
from crew.memory import Memory  # noqa: E402
from crew.store import RunStore  # noqa: E402
from crew.testing import FunctionModel  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def processes_using(folder: str) -> list[str]:
    """Command lines of the live processes that mention ``folder`` (this module's Ray instance)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if folder in cmdline:
                found.append(cmdline)
    return found


@pytest.fixture(scope="module", autouse=True)
def ray_instance():
    folder = tempfile.mkdtemp(prefix="crew-ray-test-")  # short: Ray's socket paths must fit in 107 bytes
    ray_backend.start_local(num_cpus=2, temp_dir=folder)
    yield ray.get_runtime_context().gcs_address
    ray_backend.shutdown()
    deadline = time.monotonic() + 10
    while processes_using(folder) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = processes_using(folder)
    shutil.rmtree(folder, ignore_errors=True)
    assert not left, f"Ray processes still running after shutdown: {left}"


def test_fifty_kickoffs_on_ray_give_the_local_backends_outputs():
    crew = kit.topic_crew([kit.shout])
    inputs = [{"topic": f"topic {i}"} for i in range(50)]
    local = crew.kickoff_for_each(inputs)
    remote = crew.kickoff_for_each(inputs, backend="ray", max_concurrency=4)
    assert [o.raw for o in remote] == [o.raw for o in local]
    assert [o.usage for o in remote] == [o.usage for o in local]
    assert remote[0].tool_stats["shout"].runs == 1
    assert len({o.run_id for o in remote}) == 50


def graph_crew(tool, *, cache: bool, branches: int = 6, **options) -> Crew:
    def reply(messages, tools):
        if not any(m.get("role") == "tool" for m in messages):
            n = int(re.search(r"branch (\d+)", messages[-1]["content"]).group(1)) if cache is False else 1
            return [{"name": tool.name, "args": {"n": n}}]
        return "got " + " ".join(m["content"] for m in messages if m.get("role") == "tool")

    agent = Agent(role="worker", goal="g", backstory="b", llm=FunctionModel(reply), tools=[tool])
    tasks = [Task(name=f"b{i}", description=f"branch {i}", expected_output="x", agent=agent) for i in range(branches)]
    join = Task(name="join", description="branch 99: join", expected_output="x", agent=agent, context=list(tasks))
    return Crew(agents=[agent], tasks=[*tasks, join], process="graph", backend="ray", cache=cache, **options)


def test_a_graph_on_ray_keeps_usage_limits_exact_across_workers():
    crew = graph_crew(kit.ping, cache=False)  # 7 distinct calls to a tool allowed 3 runs per run
    recorded: list[str] = []
    out = asyncio.run(crew.kickoff_async(on_task_done=lambda o: recorded.append(o.name)))
    assert sorted(recorded) == sorted(["b0", "b1", "b2", "b3", "b4", "b5", "join"])  # each task recorded once
    stats = out.tool_stats["ping"]
    assert (stats.calls, stats.runs, stats.refused) == (7, 3, 4)
    answers = [o.raw for o in out.tasks_output]
    assert sum("pong" in a for a in answers) == 3 and sum("usage limit of 3" in a for a in answers) == 4
    assert [o.status for o in out.tasks_output] == ["done"] * 7 and out.usage.requests == 14


def test_output_files_and_callbacks_of_a_graph_on_ray_happen_on_the_driver(tmp_path):
    seen: list[tuple[str, int]] = []
    crew = graph_crew(kit.ping, cache=True, branches=2, task_callback=lambda out: seen.append((out.name, os.getpid())))
    crew.tasks[-1].output_file = str(tmp_path / "joined.md")
    crew.tasks[0].callback = lambda out: seen.append(("callback", os.getpid()))
    out = crew.kickoff()
    assert sorted(seen) == sorted(
        [("callback", os.getpid()), ("b0", os.getpid()), ("b1", os.getpid()), ("join", os.getpid())]
    )
    assert (tmp_path / "joined.md").read_text() == out.raw


def call_rows(store: RunStore, run_id: str) -> tuple[list[tuple], list[tuple]]:
    detail = store.detail(run_id)
    models = sorted((c.task, c.model, c.status, c.usage.total_tokens) for c in detail.model_calls)
    tools = sorted((c.task, c.tool, c.status, str(c.args), c.result) for c in detail.tool_calls)
    return models, tools


def test_a_graph_on_ray_with_a_store_records_each_model_and_tool_call_once(tmp_path):
    store = RunStore(tmp_path / "runs.db")
    out = graph_crew(kit.ping, cache=False, branches=2, store=store).kickoff()
    local = graph_crew(kit.ping, cache=False, branches=2, store=store).model_copy(update={"backend": "local"})
    expected = local.kickoff()
    models, tools = call_rows(store, out.run_id)
    assert (models, tools) == call_rows(store, expected.run_id)  # the same rows as a run on this process
    assert len(models) == out.usage.requests == 6 and len(tools) == 3
    detail = store.detail(out.run_id)
    assert detail.run.status == "done" and detail.run.usage == out.usage
    assert [t.output["raw"] for t in detail.tasks] == [o.raw for o in out.tasks_output]


@tool
def pause(seconds: float) -> str:
    """Wait, then say so."""
    time.sleep(seconds)
    return f"waited {seconds}"


def test_a_streamed_graph_on_ray_shows_the_workers_turns_text_and_tools_as_they_happen(tmp_path):
    def reply(messages, tools):
        if not any(m.get("role") == "tool" for m in messages):
            return [{"name": "pause", "args": {"seconds": 1.5}}]
        return "the answer after the pause"

    agent = Agent(role="waiter", goal="g", backstory="b", llm=FunctionModel(reply), tools=[pause])
    task = Task(name="wait", description="wait", expected_output="x", agent=agent)
    store = RunStore(tmp_path / "runs.db")
    crew = Crew(agents=[agent], tasks=[task], process="graph", backend="ray", store=store)
    received = [(time.monotonic(), event) for event in crew.stream()]
    kinds = [type(event).__name__ for _, event in received]
    assert kinds[0] == "RunStarted" and kinds[-1] == "CrewOutput" and kinds.count("TaskFinished") == 1
    assert kinds.count("AgentTurnStarted") == 2  # the worker's two model turns
    assert kinds.count("ToolCallStarted") == kinds.count("ToolCallFinished") == 1  # live, never again at the end
    at = {type(event).__name__: moment for moment, event in reversed(received)}  # each kind's first arrival
    assert at["TaskFinished"] - at["ToolCallStarted"] >= 1.0  # told while the tool ran, not when the task ended
    text = "".join(event.text for _, event in received if type(event).__name__ == "TextDelta")
    assert text == "the answer after the pause" == received[-1][1].raw
    assert all(event.task == "wait" for _, event in received if type(event).__name__ == "TextDelta")
    models, tools = call_rows(store, received[-1][1].run_id)  # and the store still has each call once
    assert len(models) == 2 and len(tools) == 1


@tool
async def marked_wait(folder: str) -> str:
    """Mark the start, wait, mark the end."""
    Path(folder, "started").touch()
    await asyncio.sleep(2.0)
    Path(folder, "ended").touch()
    return "waited"


def test_leaving_a_stream_on_ray_early_stops_the_workers_task(tmp_path):
    """The worker ran its task on in a thread of its own: tools and models went on, and were paid for."""

    def reply(messages, tools):
        if not any(m.get("role") == "tool" for m in messages):
            return [{"name": "marked_wait", "args": {"folder": str(tmp_path)}}]
        return "done waiting"

    agent = Agent(role="waiter", goal="g", backstory="b", llm=FunctionModel(reply), tools=[marked_wait])
    task = Task(name="wait", description="wait", expected_output="x", agent=agent)
    crew = Crew(agents=[agent], tasks=[task], process="graph", backend="ray")
    for event in crew.stream():
        if type(event).__name__ == "ToolCallStarted":
            deadline = time.monotonic() + 20  # announced as the call starts: wait for the tool's first line
            while not (tmp_path / "started").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            break  # the reader leaves while the tool waits
    time.sleep(3.0)  # past the tool's 2 s
    assert (tmp_path / "started").exists() and not (tmp_path / "ended").exists()


def test_a_worker_killed_in_a_streamed_graph_is_retried_and_the_stream_ends_with_its_output(tmp_path):
    marker = tmp_path / "attempts"
    crew = kit.topic_crew([kit.crash_once], process="graph", backend=ray_backend.RayBackend(max_retries=2))
    events = list(crew.stream({"topic": f"x marker={marker} end"}))
    assert marker.read_text() == "2"  # the first worker died in the tool; Ray ran the task again
    assert "survived after 2 attempts" in events[-1].raw
    finished = [event for event in events if type(event).__name__ == "ToolCallFinished"]
    assert [event.result for event in finished] == ["survived after 2 attempts"]  # the dead attempt finished none
    marker.unlink()
    once = kit.topic_crew([kit.crash_once], process="graph", backend=ray_backend.RayBackend(max_retries=0))
    with pytest.raises(CrewRunError, match=r"the Ray worker running this task 'task_1' died 1 time \(max_retries=0\)"):
        list(once.stream({"topic": f"x marker={marker} end"}))


def test_the_runs_cache_is_shared_by_the_workers():
    crew = graph_crew(kit.ping, cache=True, branches=3, max_concurrency=1)  # one at a time: no race to the cache
    out = crew.kickoff()
    stats = out.tool_stats["ping"]
    assert (stats.calls, stats.runs, stats.cache_hits) == (4, 1, 3)


async def test_a_killed_worker_is_retried_and_its_result_recorded_once(tmp_path):
    marker = tmp_path / "attempts"
    store = RunStore(tmp_path / "runs.db")
    crew = kit.topic_crew([kit.crash_once], store=store)
    backend = ray_backend.RayBackend(max_retries=2)
    async with aclosing(for_each(crew, [{"topic": f"x marker={marker} end"}], backend=backend)) as results:
        seen = [r async for r in results]
    assert [r.status for r in seen] == ["done"] and "survived after 2 attempts" in seen[0].raw
    assert marker.read_text() == "2"  # the first worker died in the tool; Ray ran the kickoff again
    detail = store.detail(seen[0].run_id)  # the driver recorded the attempt that came back, once
    assert detail.run.status == "done" and detail.run.usage == seen[0].usage
    assert [t.output["raw"] for t in detail.tasks] == [seen[0].raw]
    assert len(detail.model_calls) == 2 and [c.result for c in detail.tool_calls] == ["survived after 2 attempts"]
    marker.unlink()
    once = ray_backend.RayBackend(max_retries=0)
    async with aclosing(for_each(crew, [{"topic": f"x marker={marker} end"}], backend=once)) as results:
        failed = [r async for r in results]
    assert [r.status for r in failed] == ["failed"]
    assert failed[0].error == "the Ray worker running this kickoff died 1 time (max_retries=0): WorkerCrashedError"
    lost = store.detail(failed[0].run_id)
    assert (lost.run.status, lost.run.error) == ("failed", "CrewError: " + failed[0].error)
    assert lost.model_calls == [] and lost.tool_calls == [] and len(store.runs()) == 2


def test_an_unshippable_tool_is_named_before_anything_is_sent():
    crew = kit.topic_crew([kit.database_tool()])
    message = r"tool 'database' \(agent 'writer'\) cannot be sent to Ray workers: its field 'conn' holds a sqlite3"
    with pytest.raises(NotShippableError, match=message):
        crew.kickoff_for_each([{"topic": "a"}], backend="ray")
    graph = crew.model_copy(update={"backend": "ray"})
    with pytest.raises(NotShippableError, match=message):
        graph.kickoff({"topic": "a"})


def test_what_needs_one_process_is_refused_before_the_run():
    manager = Agent(role="lead", goal="g", backstory="b", llm=FunctionModel(kit.reply))
    worker = Agent(role="worker", goal="g", backstory="b", llm=FunctionModel(kit.reply))
    task = Task(description="do it", expected_output="x")
    crew = Crew(agents=[worker], tasks=[task], process="hierarchical", manager_agent=manager, backend="ray")
    with pytest.raises(ConfigError, match="the hierarchical process and allow_delegation need every agent in one"):
        crew.kickoff()
    asking = Crew(agents=[worker], tasks=[Task(description="x", expected_output="x", agent=worker, human_input=True)])
    with pytest.raises(ConfigError, match="task 'task_1' has human_input, which backend='ray' cannot ask"):
        asking.model_copy(update={"backend": "ray"}).kickoff()

    @tool(requires_approval=True)
    def wire_money(amount: int) -> str:
        """Send money."""
        return "sent"

    paying = Agent(role="payer", goal="g", backstory="b", llm=FunctionModel(kit.reply), tools=[wire_money])
    approving = Crew(agents=[paying], tasks=[Task(description="x", expected_output="x", agent=paying)], backend="ray")
    with pytest.raises(ConfigError, match="tool 'wire_money', which requires approval; backend='ray' cannot ask"):
        approving.kickoff()


@pytest.mark.parametrize("batch", [False, True], ids=["kickoff", "for-each"])
def test_a_ray_crews_kickoff_interrupted_on_the_cli_leaves_no_ray_behind(tmp_path, batch):
    """`backend: ray` in crew.yaml: after Ctrl-C (os._exit) Ray's processes lived on, orphaned."""
    short = tempfile.mkdtemp(prefix="crt-")  # the CLI's own Ray instance lives under $TMPDIR: short for its sockets
    folder = tmp_path / "slow"
    folder.mkdir()
    (folder / "crew.yaml").write_text(
        "llm: test\nbackend: ray\ntools:\n  nap: tools:nap\nagents:\n  w: {role: W, goal: G, tools: [nap]}\n"
        "tasks:\n  t: {description: Rest, agent: w}\n"
    )
    started = tmp_path / "started"
    (folder / "tools.py").write_text(
        "import time\nfrom pathlib import Path\nfrom crew import tool\n\n@tool\n"
        "def nap(seconds: float = 0.0) -> str:\n"
        f'    """Rest."""\n    Path({str(started)!r}).touch()\n    time.sleep(60)\n    return "rested"\n'
    )
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(PYTHONPATH=str(REPO), TMPDIR=short)
    command = [sys.executable, "-m", "crew.cli", "kickoff", str(folder), "--live-tools", "--no-store", "-q"]
    if batch:
        (tmp_path / "in.jsonl").write_text('{"topic": "a"}\n{"topic": "b"}\n')
        command += ["--for-each", str(tmp_path / "in.jsonl")]
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        while not started.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
        assert started.exists(), process.communicate(timeout=10)[1].decode()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 130
    finally:
        process.kill()
    deadline = time.monotonic() + 20
    while processes_using(short) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert processes_using(short) == [] and not list(Path(short).glob("crew-ray-*"))
    shutil.rmtree(short, ignore_errors=True)


def test_the_cli_runs_a_batch_on_the_cluster_at_address(ray_instance, tmp_path):
    # named "crew", in the driver's working folder, which Ray puts on its workers' path: the
    # folder must not be taken for the package (it was, with crew installed editable)
    folder = tmp_path / "crew"
    folder.mkdir()
    (folder / "crew.yaml").write_text(
        "name: remote\nllm: test\ntools:\n  nap: tools:nap\n"
        "agents:\n  writer:\n    role: Writer\n    goal: Write about {topic}\n"
        "    backstory: Writes.\n    tools: [nap]\n"
        "tasks:\n  write:\n    description: One line about {topic}.\n    expected_output: a line\n    agent: writer\n"
    )
    (folder / "tools.py").write_text(
        'from crew import tool\n\n@tool\ndef nap(seconds: float = 0.0) -> str:\n    """Rest."""\n    return "rested"\n'
    )  # a crew folder's own module: it travels by value, the workers cannot import it
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps({"topic": f"t{i}"}) + "\n" for i in range(6)))
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "crew.cli", "kickoff", str(folder), "--live-tools", "--for-each", str(inputs),
         "-o", str(out), "--address", ray_instance, "--ordered", "--store", str(tmp_path / "runs.db")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + (out.read_text() if out.exists() else "")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["index"] for r in rows] == list(range(6)) and {r["status"] for r in rows} == {"done"}
    assert "nap: rested" in rows[0]["raw"] and "done: 6/6: 6 done · 0 failed" in done.stderr
    with RunStore(tmp_path / "runs.db") as store:  # the driver recorded every kickoff, once
        runs = {r.id: r for r in store.runs()}
        assert sorted(runs) == sorted(r["run_id"] for r in rows)
        for row in rows:
            detail = store.detail(row["run_id"])
            assert (detail.run.status, detail.run.inputs, detail.run.usage.model_dump()) == (
                "done",
                row["inputs"],
                row["usage"],
            )
            assert [t.output["raw"] for t in detail.tasks] == [row["raw"]]
            assert len(detail.model_calls) == row["usage"]["requests"] and len(detail.tool_calls) == 1


PROBE = """
import sys
sys.path.insert(0, {here!r})
import shipping_kit as kit
from crew.backends import ray as ray_backend
ray_backend.start_local(num_cpus=1)
crew = kit.topic_crew([kit.shout])
assert len(crew.kickoff_for_each([{{"topic": "a"}}, {{"topic": "b"}}], backend="ray")) == 2
import time; time.sleep(2)  # Ray's API server asks for its cloud about when ray.init returns
import ray; ray.shutdown()
# the control: a child process tries the metadata address once (in this namespace nothing can
# leave: no route, so connect fails at once); the trace must catch it like any Ray process's
import subprocess
probe = "import socket; s = socket.socket(); s.settimeout(1); print(s.connect_ex(('169.254.169.254', 80)))"
subprocess.run([sys.executable, "-c", probe], check=True)
print("ok")
"""

LOOPBACK = re.compile(r'inet_addr\("127\.|inet_pton\(AF_INET6, "(::1|::ffff:127\.[0-9.]+)"')


def connects_past_loopback(tmp_path: Path) -> list[str]:
    """Every connect() of every process of a Ray instance (driver, GCS, raylet, API server,
    workers), recorded by strace in a network namespace with only loopback, so nothing can
    leave even when it is tried; returns the attempts that went anywhere but loopback."""
    if os.geteuid() != 0 or not (shutil.which("strace") and shutil.which("unshare") and shutil.which("ip")):
        pytest.skip("needs root, strace, unshare and ip (a network namespace with only loopback)")
    log = tmp_path / "connect.log"
    script = tmp_path / "probe.py"
    script.write_text(PROBE.format(here=str(HERE)))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_MODE", "RAY_USAGE_STATS_ENABLED", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"):
        env.pop(name, None)  # this module's instance set them in our environment; the probe starts afresh
    trace = f"strace -f -qq --seccomp-bpf -e trace=connect -o {log} {sys.executable} {script}"
    command = f"ip link set lo up && exec {trace}"
    done = subprocess.run(
        ["unshare", "-n", "sh", "-c", command], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.stdout.split()[-1:] == ["ok"], done.stderr[-2000:]
    inet = [line for line in log.read_text().splitlines() if "connect(" in line and "AF_INET" in line]
    assert len(inet) > 10  # the trace saw the processes talk to each other over loopback
    return [line for line in inet if not LOOPBACK.search(line)]


def test_no_ray_process_of_ours_tries_to_reach_past_loopback(tmp_path):
    outside = connects_past_loopback(tmp_path)
    assert len(outside) == 1, "\n".join(outside)  # the control's attempt, and nothing from Ray
    assert 'inet_addr("169.254.169.254")' in outside[0] and "ENETUNREACH" in outside[0]


def _spans_of(exporter, run_id: str) -> list:
    return [s for s in exporter.get_finished_spans() if (s.attributes or {}).get("crew.run.kickoff.id") == run_id]


def test_ray_runs_are_traced_on_the_driver_as_local_ones_are(span_exporter):
    """kickoff_for_each on Ray made no span at all (its tracer would be on the worker, where none is
    set up); a graph on Ray had one nameless turn per task instead of one span per model turn."""
    exporter = span_exporter
    outs = kit.topic_crew([kit.ping]).kickoff_for_each([{"topic": "a"}, {"topic": "b"}], backend="ray")
    names = {s.name for s in _spans_of(exporter, outs[0].run_id)}
    assert {"invoke_workflow crew", "invoke_agent writer", "execute_tool ping"} <= names
    assert any(n.startswith("chat ") for n in names) and any(re.fullmatch(r"turn \d+ writer", n) for n in names)

    graph = graph_crew(kit.ping, cache=True, branches=2).kickoff()
    turns = [s for s in _spans_of(exporter, graph.run_id) if s.name.startswith("turn")]
    assert turns and all(re.fullmatch(r"turn \d+ \w+", s.name) for s in turns)
    assert all("crew.turn" in (s.attributes or {}) for s in turns)


@tool("lookup")
def weather_lookup(city: str) -> str:
    """Weather of a city."""
    return f"weather in {city}: sunny"


@tool("lookup")
def population_lookup(city: str) -> str:
    """Population of a city."""
    return f"population of {city}: 1M"


def test_two_different_tools_of_one_name_stay_apart_across_ray_workers():
    """Each worker registered only its task's tools, so B's `lookup` was `lookup` there too and the
    run's shared cache handed it A's result; the driver's scopes now travel with the task."""

    def reply(messages, tools):
        if not any(m.get("role") == "tool" for m in messages):
            return [{"name": "lookup", "args": {"city": "Oslo"}}]
        return next(m["content"] for m in messages if m.get("role") == "tool")

    a = Agent(role="A", goal="g", backstory="b", llm=FunctionModel(reply), tools=[weather_lookup])
    b = Agent(role="B", goal="g", backstory="b", llm=FunctionModel(reply), tools=[population_lookup])
    first = Task(name="a", description="x", expected_output="x", agent=a)
    second = Task(name="b", description="x", expected_output="x", agent=b, context=[first])  # after a: a warm cache
    out = Crew(agents=[a, b], tasks=[first, second], process="graph", backend="ray").kickoff()
    assert [o.raw for o in out.tasks_output] == ["weather in Oslo: sunny", "population of Oslo: 1M"]


def test_memory_and_knowledge_reach_the_prompts_of_tasks_run_on_ray(tmp_path):
    """A graph's task on a worker had no context providers (its prompt neither recalled nor read,
    its output was not remembered): the driver now asks them and sends the sections along. A
    whole kickoff on a worker opened memory in its working folder (no run store to sit beside):
    it now opens the driver's file, and its recalls are recorded."""
    graph = kit.office_crew(tmp_path, process="graph", backend="ray")
    assert graph.kickoff(inputs={"day": "weekdays"}).raw == "office: knows=True remembers=False"
    second = graph.kickoff(inputs={"day": "weekdays"})
    assert second.raw == "office: knows=True remembers=True"  # the first run's output, remembered
    (whole,) = kit.office_crew(tmp_path).kickoff_for_each([{"day": "weekdays"}], backend="ray")
    assert whole.raw == "office: knows=True remembers=True"
    with RunStore(tmp_path / "runs.db") as store:
        for run_id in (second.run_id, whole.run_id):
            assert run_id is not None
            assert {c.provider for c in store.context(run_id)} == {"memory", "knowledge"}
    with Memory(tmp_path / "memory.db", embedder="none") as memory:
        assert len(memory.list_records()) == 3
