"""Wall time of task DAGs against the ideal, with a model that takes 100 ms per call.

Run: python benchmarks/dag_latency.py [--latency 0.1] [--seed 7] [--repeat 3]

Every task makes exactly one model call (a ``FunctionModel`` that sleeps ``latency``
seconds, then answers). The ideal is the wall time of a zero-overhead scheduler: the
critical path when concurrency does not bind, else the list schedule under the bound
(``TaskGraph.makespan``, the scheduler's own policy: start what is ready, longest
remaining path first). The lower bound max(critical path, work / slots) is printed too.

Goal: the graph process within 5% of the ideal on every shape. Each graph-process row is
the best of ``--repeat`` kickoffs (a shared 2-core machine adds milliseconds of noise
to a 0.3 s run); the sequential rows, printed once, are for comparison only. The sequential process
is printed for comparison (its ideal is the sum of the tasks). For scale: CrewAI needs
2.38 s for 10 independent 200 ms tasks in its sequential process and 0.73 s at best with
async tasks; the ideal is 0.2 s.

The last rows are each a fresh process's *first* kickoff of 8 independent tasks (on the
offline ``test`` model, and on the native transport against a local OpenAI-compatible
server in another process): how far apart the tasks start, or their model calls end,
against the same process's second kickoff. Goal: at most 20 ms more, so a cold import or
first use in one task never holds the others back.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crew import Agent, Crew, Task

GOAL = 1.05
FIRST_GOAL_MS = 20.0
_SERVE = (
    "import sys; from crew.testing import OpenAIServer; s = OpenAIServer(handler=lambda r: 'ok').start(); "
    "print(s.url, flush=True); sys.stdin.read()"
)


def shapes(seed: int) -> dict[str, tuple[dict[str, list[str]], int]]:
    """name -> (edges: task -> the tasks it needs, max_concurrency)."""
    rng = random.Random(seed)
    chain = {f"c{i}": ([f"c{i - 1}"] if i else []) for i in range(8)}
    diamond = {"top": [], **{f"mid{i}": ["top"] for i in range(4)}, "bottom": [f"mid{i}" for i in range(4)]}
    independent = {f"i{i}": [] for i in range(32)}
    random_dag: dict[str, list[str]] = {}
    for i in range(200):
        earlier = list(random_dag)
        random_dag[f"r{i}"] = rng.sample(earlier, k=min(len(earlier), rng.randint(0, 3)))
    return {
        "chain of 8": (chain, 8),
        "diamond 1-4-1": (diamond, 8),
        "32 independent, 8 slots": (independent, 8),
        "random 200-task DAG, 8 slots": (random_dag, 8),
    }


def build(edges: dict[str, list[str]], process: str, max_concurrency: int, latency: float) -> Crew:
    from crew.testing import FunctionModel  # here: a first-kickoff child must not have crew.testing loaded

    agent = Agent(role="Worker", goal="work", llm=FunctionModel(lambda messages, tools: "ok", latency=latency))
    tasks: dict[str, Task] = {}
    for name, deps in edges.items():
        tasks[name] = Task(
            name=name, description=name, expected_output="ok", agent=agent, context=[tasks[d] for d in deps]
        )
    return Crew(agents=[agent], tasks=list(tasks.values()), process=process, max_concurrency=max_concurrency)


def timed_kickoff(crew: Crew) -> float:
    started = time.perf_counter()
    out = crew.kickoff()
    wall = time.perf_counter() - started
    assert all(o.status == "done" for o in out.tasks_output)
    return wall


def timer_floor(latency: float, n: int = 8) -> float:
    """Wall time of ``n`` back-to-back ``asyncio.sleep(latency)``: the event loop's own lateness."""

    async def sleeps() -> float:
        started = time.perf_counter()
        for _ in range(n):
            await asyncio.sleep(latency)
        return time.perf_counter() - started

    return asyncio.run(sleeps()) / (n * latency)


def first_kickoff(model: str) -> dict[str, float]:
    """In this (fresh) process: two kickoffs of independent tasks; how far apart their tasks start and
    their model calls end, on the first kickoff and on the second (warm: the floor of this machine)."""
    from crew.common.events import bus

    server = None
    llm: object = "test"
    if model == "native":  # the server in a process of its own: its imports would warm this one
        server = subprocess.Popen(
            [sys.executable, "-c", _SERVE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert server.stdout is not None
        from crew import LLM

        llm = LLM("openai/gpt-4o-mini", api_base=server.stdout.readline().strip(), api_key="sk-bench")
    seen: dict[str, list[float]] = {"task.start": [], "llm.call": []}
    bus.subscribe(lambda e: seen[e.type].append(time.perf_counter()) if e.type in seen else None)
    row: dict[str, float] = {}
    try:
        agent = Agent(role="Worker", goal="work", llm=llm)
        tasks = [Task(name=f"t{i}", description=f"part {i}", expected_output="ok", agent=agent) for i in range(8)]
        crew = Crew(agents=[agent], tasks=tasks, process="graph", max_concurrency=len(tasks))
        for run in ("first", "warm"):
            for times in seen.values():
                times.clear()
            crew.kickoff()
            row[run] = max(_spread(seen["task.start"]), _spread(seen["llm.call"]))
    finally:
        if server is not None:
            server.communicate("", timeout=10)
    return row


def _spread(times: list[float]) -> float:
    return (max(times) - min(times)) * 1000


def first_kickoff_rows() -> float:
    """Print a fresh process's first kickoff against its second, per model; return the worst excess."""
    print("\nfirst kickoff of a fresh process, 8 independent tasks: how far apart they start (or their")
    print(f"model calls end), against the second kickoff; goal: at most {FIRST_GOAL_MS:.0f} ms more")
    print(f"{'model':30} {'first ms':>9} {'warm ms':>9} {'excess ms':>10}  goal")
    worst = 0.0
    for model in ("test", "native"):
        child = [sys.executable, __file__, "--first-kickoff", model]
        done = subprocess.run(child, capture_output=True, text=True, timeout=120, check=True)
        row = json.loads(done.stdout.splitlines()[-1])
        excess = row["first"] - row["warm"]
        worst = max(worst, excess)
        verdict = "ok" if excess <= FIRST_GOAL_MS else "MISSED"
        print(f"{model:30} {row['first']:9.1f} {row['warm']:9.1f} {excess:10.1f}  {verdict}")
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3, help="kickoffs per graph-process row; the best counts")
    parser.add_argument("--first-kickoff", choices=("test", "native"), help=argparse.SUPPRESS)  # the child of a row
    args = parser.parse_args()
    if args.first_kickoff:
        print(json.dumps(first_kickoff(args.first_kickoff)))
        return
    latency = args.latency
    print(f"model latency {latency * 1000:.0f} ms per call; goal: graph wall <= ideal x {GOAL:.2f}\n")
    header = f"{'shape':30} {'process':10} {'tasks':>5} {'wall s':>8} {'ideal s':>8} {'bound s':>8} {'ratio':>6}  goal"
    print(header)
    print("-" * len(header))
    worst = 0.0
    for label, (edges, slots) in shapes(args.seed).items():
        for process in ("graph", "sequential"):
            crew = build(edges, process, slots, latency)
            graph = crew.validate_graph()
            weights = {name: latency for name in graph.names}
            ideal = graph.makespan(weights, slots)
            bound = max(sum(weights[n] for n in graph.critical_path(weights)), latency * len(graph.names) / slots)
            if process == "sequential":
                bound = ideal = latency * len(graph.names)
            wall = min(timed_kickoff(crew) for _ in range(args.repeat if process == "graph" else 1))
            ratio = wall / ideal
            verdict = ""
            if process == "graph":
                worst = max(worst, ratio)
                verdict = "ok" if ratio <= GOAL else "MISSED"
            print(
                f"{label:30} {process:10} {len(edges):5d} {wall:8.3f} {ideal:8.3f} {bound:8.3f} {ratio:6.3f}  {verdict}"
            )
    print(
        f"\nasyncio floor: back-to-back sleeps of {latency * 1000:.0f} ms run at x {timer_floor(latency):.3f} of ideal"
    )
    print(f"worst graph-process ratio: {worst:.3f} (goal <= {GOAL:.2f}) -> {'ok' if worst <= GOAL else 'MISSED'}")
    print("for scale: CrewAI, 10 independent 200 ms tasks: 2.38 s sequential, 0.73 s async at best (ideal 0.2 s)")
    excess = first_kickoff_rows()
    print(f"worst first-kickoff excess: {excess:.1f} ms (goal <= {FIRST_GOAL_MS:.0f} ms)")


if __name__ == "__main__":
    main()
