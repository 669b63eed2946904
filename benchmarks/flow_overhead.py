"""What a flow costs per step, beside CrewAI's Flow on the same flows, and what a resume reruns.

Run: python benchmarks/flow_overhead.py [--repeat 5] [--steps 100] [--turns 1000]

1. A chain of ``--steps`` plain-function steps (``@start`` then ``@listen`` of the one before):
   wall time of a kickoff / steps. The steps do nothing, so all of it is the flow's own cost:
   firing, a worker thread per sync step, events, the output list.
2. A router loop of ``--turns`` turns (a labelled start, a router sending it back, CrewAI's
   loop idiom): wall time / step runs (two per turn).
3. With ``/tmp/crewai-venv/bin/python`` (a venv with crewai 1.15 installed), the same two flows
   written against ``crewai.flow`` run there in the same invocation, and the ratio of the
   per-step costs is printed beside the goal: crew's at least 10x less.
4. A 100-step chain on a run store whose step 60 fails: the resume runs the 40 steps from 60
   on, not 100 (counted by the steps themselves).

Each timing is the best of ``--repeat`` kickoffs (a shared machine adds noise).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CREWAI_PYTHON = Path("/tmp/crewai-venv/bin/python")
GOAL_RATIO = 10.0

# One source for both frameworks: only the import line differs.
FLOWS = '''
def chain(Flow, start, listen, steps, fail=None, calls=None):
    """A flow of ``steps`` plain functions, each listening to the one before; ``fail["at"]`` raises."""
    body = {}

    def make(i):
        def step(self):
            if calls is not None:
                calls.append(i)
            if fail is not None and i == fail["at"]:
                raise RuntimeError(f"step {i} fails")
            return i
        step.__name__ = f"s{i}"
        return step

    previous = None
    for i in range(steps):
        fn = make(i)
        body[fn.__name__] = start()(fn) if previous is None else listen(previous)(fn)
        previous = fn
    return type("Chain", (Flow,), body)


def loop(Flow, start, listen, router, turns):
    """A labelled start that a router sends back ``turns`` times."""

    class Loop(Flow):
        @start("again")
        def turn(self):
            self.state["n"] = self.state.get("n", 0) + 1
            return self.state["n"]

        @router(turn)
        def check(self, n):
            return "again" if n < turns else "done"

        @listen("done")
        def finish(self):
            return self.state["n"]

    return Loop
'''

CREWAI_SCRIPT = """
import json, os, sys, time
sys.setrecursionlimit(100000)
from crewai.flow.flow import Flow, listen, router, start
{flows}
steps, turns, repeat = {steps}, {turns}, {repeat}
out = {{}}
Chain = chain(Flow, start, listen, steps)
times = []
for _ in range(repeat):
    flow = Chain()
    t0 = time.perf_counter()
    flow.kickoff()
    times.append(time.perf_counter() - t0)
out["chain"] = min(times) / steps
Loop = loop(Flow, start, listen, router, turns)
try:
    times = []
    for _ in range(repeat):
        flow = Loop(max_method_calls=turns + 10)
        t0 = time.perf_counter()
        assert flow.kickoff() == turns
        times.append(time.perf_counter() - t0)
    out["loop"] = min(times) / (2 * turns + 1)
except BaseException as exc:
    out["loop_error"] = f"{{type(exc).__name__}}: {{str(exc)[:200]}}"
print(json.dumps(out))
"""


def _namespace() -> dict[str, Any]:
    space: dict[str, Any] = {}
    exec(FLOWS, space)  # our own source, shared with the CrewAI run
    return space


def _best(make: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        flow = make()
        started = time.perf_counter()
        flow.kickoff()
        times.append(time.perf_counter() - started)
    return min(times)


def crew_figures(steps: int, turns: int, repeat: int) -> dict[str, float]:
    from crew.flow import Flow, listen, router, start

    space = _namespace()
    chain = space["chain"](Flow, start, listen, steps)
    loop = space["loop"](Flow, start, listen, router, turns)
    chain().kickoff()  # warm: the worker threads exist, the modules are loaded
    return {
        "chain": _best(chain, repeat) / steps,
        "loop": _best(lambda: loop(max_steps=2 * turns + 10), repeat) / (2 * turns + 1),
    }


def crewai_figures(steps: int, turns: int, repeat: int) -> dict[str, Any] | None:
    if not CREWAI_PYTHON.exists():
        return None
    script = CREWAI_SCRIPT.format(flows=FLOWS, steps=steps, turns=turns, repeat=repeat)
    env = {**os.environ, "CREWAI_DISABLE_TELEMETRY": "true", "OTEL_SDK_DISABLED": "true"}
    env |= {"CREWAI_TRACING_ENABLED": "false", "CREWAI_DISABLE_TRACKING": "true"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [str(CREWAI_PYTHON), "-c", textwrap.dedent(script)], capture_output=True, text=True, env=env, timeout=900
    )
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def resume_figure() -> tuple[int, int]:
    """(steps the failed run ran, steps its resume ran) for a 100-step chain failing at step 60."""
    from crew.errors import FlowStepError
    from crew.flow import Flow, listen, start

    calls: list[int] = []
    fail = {"at": 60}
    failing = _namespace()["chain"](Flow, start, listen, 100, fail=fail, calls=calls)
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "runs.db"
        with contextlib.suppress(FlowStepError):
            failing(store=store).kickoff()
        first = len(calls)
        calls.clear()
        fail["at"] = -1
        failing(store=store).resume()
        return first, len(calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--turns", type=int, default=1000)
    args = parser.parse_args()
    ours = crew_figures(args.steps, args.turns, args.repeat)
    theirs = crewai_figures(args.steps, args.turns, args.repeat)
    print(f"crew: {args.steps}-step chain of plain functions: {ours['chain'] * 1e6:.0f} µs per step")
    print(f"crew: {args.turns}-turn router loop: {ours['loop'] * 1e6:.0f} µs per step run")
    if theirs is None:
        print(f"CrewAI: not measured ({CREWAI_PYTHON} does not exist)")
    elif "error" in theirs:
        print(f"CrewAI: failed to run: {theirs['error']}")
    else:
        for key, what in (("chain", f"{args.steps}-step chain"), ("loop", f"{args.turns}-turn router loop")):
            if key not in theirs:
                print(f"CrewAI 1.15: {what}: did not finish ({theirs.get(key + '_error')})")
                continue
            ratio = theirs[key] / ours[key]
            verdict = "ok" if ratio >= GOAL_RATIO else "MISSED"
            print(
                f"CrewAI 1.15: {what}: {theirs[key] * 1e6:.0f} µs per step; crew's is {ratio:.1f}x less   "
                f"goal >= {GOAL_RATIO:.0f}x   {verdict}"
            )
    first, resumed = resume_figure()
    verdict = "ok" if resumed == 40 else "MISSED"
    what = f"resume of a 100-step flow whose step 60 failed: the run ran {first} steps, its resume {resumed}"
    print(f"{what}   goal 40   {verdict}")


if __name__ == "__main__":
    main()
