"""Many kickoffs: the local backend against Ray, at 2, 4 and 8 kickoffs at once, in one run.

Run: python benchmarks/ray_scaling.py [--kickoffs 200] [--latency 0.2] [--cpus 2]

Every kickoff is one task whose model (a ``FunctionModel``) sleeps ``latency`` seconds and
answers, so a kickoff's ideal time is ``latency`` and a batch's ideal wall time is
``kickoffs * latency / concurrency``. Printed per row: wall time, throughput (kickoffs/s),
the ideal throughput, and the overhead per kickoff (how much longer than ``latency`` each
kickoff held its slot, on average). The Ray rows run on a local instance with ``--cpus``
CPUs; each kickoff asks for ``cpus / concurrency`` of a CPU, so ``concurrency`` kickoffs fit
at once (the model is I/O, not CPU). Ray's workers are started and warmed up before each
timed row (a worker process takes about a second to start on this machine).

Also measured: one round trip to a run's ledger actor (what a ``max_usage_count`` claim or a
cache lookup costs a graph task on Ray), and the start of the local instance.

Goals on this machine (2 cores shared with others): the local backend within 10 ms per
kickoff of the ideal; Ray's overhead per kickoff under 50 ms; a ledger hop under 5 ms.
On one machine Ray cannot beat the local backend for I/O-bound crews: the point of the Ray
rows is what the hop costs, since on a cluster the same code runs each kickoff wherever a
CPU is free (see docs/scaling.md).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from contextlib import aclosing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crew import Agent, Crew, Task
from crew.backends import for_each
from crew.backends import ray as ray_backend
from crew.testing import FunctionModel

LOCAL_GOAL, RAY_GOAL, HOP_GOAL = 0.010, 0.050, 0.005


def answer(messages: list[dict], tools: list[dict]) -> str:
    return "done: " + messages[-1]["content"][:40]


def make_crew(latency: float) -> Crew:
    agent = Agent(role="worker", goal="work", backstory="works", llm=FunctionModel(answer, latency=latency))
    return Crew(agents=[agent], tasks=[Task(description="item {n}", expected_output="a line", agent=agent)])


async def batch(crew: Crew, n: int, concurrency: int, backend: object) -> float:
    started = time.perf_counter()
    async with aclosing(
        for_each(crew, [{"n": i} for i in range(n)], backend=backend, max_concurrency=concurrency)  # type: ignore[arg-type]
    ) as results:
        statuses = [r.status async for r in results]
    wall = time.perf_counter() - started
    assert statuses.count("done") == n, statuses
    return wall


def row(label: str, n: int, concurrency: int, latency: float, wall: float, goal: float) -> None:
    ideal = n * latency / concurrency
    overhead = wall * concurrency / n - latency
    mark = "ok" if overhead <= goal else "OVER"
    print(
        f"{label:10s} {concurrency:3d}  {wall:7.2f}s  {n / wall:7.1f}/s  (ideal {n / ideal:6.1f}/s)  "
        f"overhead/kickoff {overhead * 1000:6.1f} ms  goal < {goal * 1000:.0f} ms  {mark}"
    )


def hop_cost(rounds: int = 200) -> float:
    ray = ray_backend.load_ray()
    from crew.backends.ray_graph import RunLedger

    ledger = ray.remote(RunLedger).options(num_cpus=0).remote(True)
    ray.get(ledger.claim.remote("warm", 10**9))
    started = time.perf_counter()
    for _ in range(rounds):
        ray.get(ledger.claim.remote("tool", 10**9))
    return (time.perf_counter() - started) / rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kickoffs", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--cpus", type=int, default=2)
    args = parser.parse_args()
    n, latency = args.kickoffs, args.latency
    crew = make_crew(latency)
    print(f"{n} kickoffs, model latency {latency * 1000:.0f} ms, one task each")
    print(f"{'backend':10s} {'at once':>3s}  {'wall':>8s}  {'throughput':>9s}")
    for concurrency in (2, 4, 8):
        row("local", n, concurrency, latency, asyncio.run(batch(crew, n, concurrency, "local")), LOCAL_GOAL)
    started = time.perf_counter()
    ray_backend.start_local(num_cpus=args.cpus)
    print(f"(local Ray instance with {args.cpus} CPUs started in {time.perf_counter() - started:.1f}s)")
    try:
        for concurrency in (2, 4, 8):
            backend = ray_backend.RayBackend(task_options={"num_cpus": args.cpus / concurrency})
            asyncio.run(batch(crew, 4 * concurrency, concurrency, backend))  # start and warm the workers
            row("ray", n, concurrency, latency, asyncio.run(batch(crew, n, concurrency, backend)), RAY_GOAL)
        hop = hop_cost()
        mark = "ok" if hop <= HOP_GOAL else "OVER"
        print(f"ledger actor round trip (a usage claim or cache lookup): {hop * 1000:.2f} ms  goal < 5 ms  {mark}")
    finally:
        ray_backend.shutdown()


if __name__ == "__main__":
    main()
