"""Our own cost of running a big DAG: a 1000-task random DAG with a zero-latency model.

Run: python benchmarks/scheduler_overhead.py [--tasks 1000] [--seed 7] [--process graph|sequential] [--profile]

Every task makes one call to a ``FunctionModel`` that answers at once, so the wall time
is all crew overhead: building and checking the graph, filling placeholders, the ready
queue, one agent loop and prompt per task, outputs, events and the CrewOutput.
Goal: under 2 s total and under 150 MB peak RSS (ru_maxrss of this process, which
includes the interpreter and every import). ``--process sequential`` runs the same tasks
in declared order without explicit ``context`` (CrewAI's default), so task N sees the
outputs of all N-1 tasks before it: the prompt work grows with n^2 context items, which
is what that figure watches.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crew import Agent, Crew, Task
from crew.testing import FunctionModel

GOAL_SECONDS = 2.0
GOAL_MB = 150.0


def build(n: int, seed: int, process: str = "graph") -> Crew:
    rng = random.Random(seed)
    agent = Agent(role="Worker", goal="work on {project}", llm=FunctionModel(lambda messages, tools: "ok"))
    tasks: list[Task] = []
    for i in range(n):
        window = tasks[max(0, i - 50) :]  # dependencies among recent tasks: a deep, wide graph
        deps = rng.sample(window, k=min(len(window), rng.randint(0, 3)))
        tasks.append(
            Task(
                name=f"t{i}",
                description=f"step {i} of {{project}}",
                expected_output="ok",
                agent=agent,
                context=deps if process == "graph" else None,
            )
        )
    return Crew(agents=[agent], tasks=tasks, process=process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--process", choices=("graph", "sequential"), default="graph")
    parser.add_argument("--profile", action="store_true", help="print the top functions by own time")
    args = parser.parse_args()

    started = time.perf_counter()
    crew = build(args.tasks, args.seed, args.process)
    built = time.perf_counter()
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        out = profiler.runcall(crew.kickoff, {"project": "bench"})
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    else:
        out = crew.kickoff({"project": "bench"})
    finished = time.perf_counter()
    assert len(out.tasks_output) == args.tasks and all(o.status == "done" for o in out.tasks_output)

    graph = crew.validate_graph()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    total = finished - started
    kickoff = finished - built
    shape = "random DAG" if args.process == "graph" else "sequential crew (each reads all earlier outputs)"
    print(
        f"{args.tasks}-task {shape}: {len(graph.generations)} generations, "
        f"critical path {len(graph.critical_path())} tasks, zero-latency model"
    )
    print(f"build crew (Task objects + checks): {built - started:7.3f} s")
    print(f"kickoff:                            {kickoff:7.3f} s  ({kickoff / args.tasks * 1e3:.3f} ms per task)")
    print(
        f"total:                              {total:7.3f} s  goal < {GOAL_SECONDS:.0f} s   "
        f"{'ok' if total < GOAL_SECONDS else 'MISSED'}"
    )
    print(
        f"peak RSS:                           {peak_mb:7.1f} MB goal < {GOAL_MB:.0f} MB "
        f"{'ok' if peak_mb < GOAL_MB else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
