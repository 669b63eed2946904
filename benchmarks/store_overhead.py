"""What recording a run costs: a 200-task graph with the run store on vs off, in one process.

Run: python benchmarks/store_overhead.py [--latency 0.05] [--repeat 5]

Every task makes two model calls (a ``FunctionModel`` that sleeps ``latency`` seconds)
and one tool call, so the store writes a task row, two model-call rows (with their
messages) and a tool-call row per task, plus the run. Kickoffs with and without the
store are interleaved and each figure is the best of ``--repeat`` (a shared machine adds
noise). Two figures, beside their goals:

- the extra wall time with the store, as a ratio, with a model that takes ``latency``
  per call (goal: under 5 % extra);
- the store's cost per task, measured with an instant model (latency 0), where nothing
  hides it: (wall with store - wall without) / tasks (goal: under 1 ms).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crew import Agent, Crew, RunStore, Task, tool
from crew.testing import FunctionModel

TASKS = 200
GOAL_RATIO = 1.05
GOAL_PER_TASK = 0.001


@tool
def lookup(term: str) -> str:
    """Look a term up."""
    return f"definition of {term}"


def _reply(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    if tools and not any(m["role"] == "tool" for m in messages):
        return [{"name": "lookup", "args": {"term": str(len(messages[1]["content"]))}}]
    return "ok"


def build(latency: float, store: Any) -> Crew:
    rng = random.Random(7)
    agent = Agent(role="Worker", goal="work", llm=FunctionModel(_reply, latency=latency), tools=[lookup])
    tasks: list[Task] = []
    for i in range(TASKS):
        deps = rng.sample(tasks, k=min(len(tasks), rng.randint(0, 3)))
        tasks.append(Task(name=f"r{i}", description=f"part {i}", expected_output="ok", agent=agent, context=deps))
    return Crew(agents=[agent], tasks=tasks, process="graph", max_concurrency=8, store=store, cache=False)


def best(crew: Crew, repeat: int, other: Crew) -> tuple[float, float]:
    """Best wall time of ``crew`` and of ``other``, kicked off alternately ``repeat`` times each."""
    times: dict[int, list[float]] = {id(crew): [], id(other): []}
    for _ in range(repeat):
        for c in (crew, other):
            started = time.perf_counter()
            c.kickoff()
            times[id(c)].append(time.perf_counter() - started)
    return min(times[id(crew)]), min(times[id(other)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--latency", type=float, default=0.05, help="seconds per model call (default 0.05: a fast model; real: 0.3-3 s)"
    )
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = RunStore(Path(folder) / "runs.db")
        for c in (build(0.0, store), build(0.0, None)):
            c.kickoff()  # warm up: imports, pydantic schemas, the file
        on, off = best(build(args.latency, store), args.repeat, build(args.latency, None))
        instant_on, instant_off = best(build(0.0, store), args.repeat, build(0.0, None))
        detail = store.detail()
        rows = (len(detail.tasks), len(detail.model_calls), len(detail.tool_calls))
    ratio = on / off
    per_task = (instant_on - instant_off) / TASKS
    print(f"{TASKS}-task random graph, 8 slots, 2 model calls + 1 tool call per task; rows per run: {rows}")
    print(
        f"model latency {args.latency * 1000:.0f} ms:  store off {off:.3f} s   store on {on:.3f} s   "
        f"ratio {ratio:.3f}   goal < {GOAL_RATIO:.2f}   {'ok' if ratio < GOAL_RATIO else 'MISSED'}"
    )
    print(
        f"instant model:        store off {instant_off:.3f} s   store on {instant_on:.3f} s   "
        f"store cost per task {per_task * 1000:.3f} ms   goal < {GOAL_PER_TASK * 1000:.0f} ms   "
        f"{'ok' if per_task < GOAL_PER_TASK else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
