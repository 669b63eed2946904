"""How long until the first model request leaves, with and without prewarming litellm.

Run: python benchmarks/llm_startup.py [--repeat N]

Importing litellm costs about 5 s on the reference 2-core machine. ``LLM.prewarm()``
(or ``crew.models.prewarm_litellm()``) starts that import in a background thread as soon
as a crew knows it needs a real model, so it overlaps whatever the process does before
the first call (loading YAML, validating, building prompts, waiting on I/O).

Each scenario runs in a fresh Python process (the import is once per process) that
starts the local OpenAI-compatible server, builds an LLM pointed at it, does some
"setup work", then makes one call; the figure is the time from building the LLM to the
request arriving at the server. Setup work is either I/O-bound (sleeping, as when
waiting on files or the network: the import overlaps it fully) or CPU-bound (building
and validating pydantic models: import and setup then share one GIL, so the gain is
smaller). Then the same through a ``Crew``, which prewarms when it is built: the time
from ``kickoff()`` to the first request, with the kickoff right after building the crew
and after 3 s of other work. The last lines are the warm cost of one call to the local
server through litellm alone and through LLM.acomplete, and crew's own CPU work per call measured
apart (the difference of the two totals is below their noise).

Goal: with prewarm, build -> first request ~ max(setup, import) + one call, instead of
setup + import + one call; without setup work, prewarm costs nothing extra.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, {root!r})
    from crew.models import LLM, complete_sync
    from crew.testing import OpenAIServer, Reply

    prewarm, setup, seconds = {prewarm!r}, {setup!r}, {seconds!r}

    def cpu_setup(deadline):
        from pydantic import BaseModel, create_model
        n = 0
        while time.perf_counter() < deadline:
            model = create_model(f"M{{n}}", a=(int, 1), b=(str, "x"), c=(list[float], []))
            model.model_validate({{"a": n, "b": "y", "c": [1.0, 2.0]}}).model_dump_json()
            n += 1

    with OpenAIServer(handler=lambda request: Reply.text("ok")) as server:
        built_at = time.time()
        llm = LLM("openai/gpt-4o-mini", api_base=server.url, api_key="sk-test")
        if prewarm:
            llm.prewarm()
        if setup == "io":
            time.sleep(seconds)
        elif setup == "cpu":
            cpu_setup(time.perf_counter() + seconds)
        setup_done = time.time()
        complete_sync(llm, [{{"role": "user", "content": "hi"}}])
        first = server.requests[0].received_at
        print(json.dumps({{"first_request": first - built_at, "setup": setup_done - built_at}}))
""")

CREW_CHILD = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, {root!r})
    from crew import Agent, Crew, Task
    from crew.models import LLM
    from crew.testing import OpenAIServer, Reply

    with OpenAIServer(handler=lambda request: Reply.text("ok")) as server:
        built_at = time.time()
        llm = LLM("openai/gpt-4o-mini", api_base=server.url, api_key="sk-test")
        agent = Agent(role="Writer", goal="Write", llm=llm)
        crew = Crew(agents=[agent], tasks=[Task(description="Say ok", expected_output="ok", agent=agent)])
        time.sleep({seconds!r})   # the application's own work between building the crew and kickoff
        kickoff_at = time.time()
        crew.kickoff()
        first = server.requests[0].received_at
        print(json.dumps({{"first_request": first - built_at, "kickoff": first - kickoff_at}}))
""")

CREW_SCENARIOS = [
    ("Crew built, kickoff at once", 0.0),
    ("Crew built, 3 s of other work, kickoff", 3.0),
]

WARM = textwrap.dedent("""
    import asyncio, json, sys, time
    sys.path.insert(0, {root!r})
    from crew.models import LLM, load_litellm
    from crew.testing import OpenAIServer, Reply

    litellm = load_litellm()
    with OpenAIServer(handler=lambda request: Reply.text("ok")) as server:
        llm = LLM("openai/gpt-4o-mini", api_base=server.url, api_key="sk-test")
        messages = [{{"role": "user", "content": "hi"}}]
        direct = dict(model=llm.model, messages=messages, api_base=server.url, api_key="sk-test",
                      num_retries=0, max_retries=0, drop_params=True, timeout=60)

        async def timed(call, n):
            started = time.perf_counter()
            for _ in range(n):
                await call()
            return (time.perf_counter() - started) / n

        async def main():
            ours = lambda: llm.acomplete(messages)
            bare = lambda: litellm.acompletion(**direct)
            await timed(ours, 20); await timed(bare, 20)          # warm both paths
            rounds = [(await timed(ours, {calls}), await timed(bare, {calls})) for _ in range(5)]
            return min(r[0] for r in rounds), min(r[1] for r in rounds)   # interleaved: same load for both

        total, bare = asyncio.run(main())
        raw = litellm.completion(**direct)
        started = time.perf_counter()
        for _ in range(1000):   # crew's own work per call: request kwargs, parsing, usage, cost, event
            llm._request(messages, None)
            llm._finish(litellm, raw, 0.0, 1)
        own = (time.perf_counter() - started) / 1000
        print(json.dumps({{"total": total, "bare": bare, "own": own}}))
""")

SCENARIOS = [
    # label, prewarm, setup kind, setup seconds
    ("no setup work, no prewarm", False, None, 0.0),
    ("no setup work, prewarm", True, None, 0.0),
    ("3 s I/O-bound setup, no prewarm", False, "io", 3.0),
    ("3 s I/O-bound setup, prewarm", True, "io", 3.0),
    ("1 s CPU-bound setup, no prewarm", False, "cpu", 1.0),
    ("1 s CPU-bound setup, prewarm", True, "cpu", 1.0),
]


def run(code: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR"},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per scenario (median printed)")
    args = parser.parse_args()

    print(f"{'scenario':<36} {'build -> first request, median (min)':>38}   goal")
    figures: dict[str, float] = {}
    for label, prewarm, setup, seconds in SCENARIOS:
        code = CHILD.format(root=str(ROOT), prewarm=prewarm, setup=setup, seconds=seconds)
        samples = [run(code)["first_request"] for _ in range(args.repeat)]
        figures[label] = statistics.median(samples)
        goal = ""
        if prewarm and setup == "io":
            goal = f"~ max({seconds:g} s setup, import) + one call"
        elif prewarm and setup is None:
            goal = "no slower than without prewarm"
        print(f"{label:<36} {figures[label]:>28.2f} s ({min(samples):.2f} s)   {goal}")

    no_setup = figures["no setup work, no prewarm"]
    for kind in ("3 s I/O-bound", "1 s CPU-bound"):
        saved = figures[f"{kind} setup, no prewarm"] - figures[f"{kind} setup, prewarm"]
        print(
            f"prewarm saves {saved:.2f} s with {kind} setup (the cold import + first call alone take {no_setup:.2f} s)"
        )

    print(f"{'through a Crew (it prewarms when built)':<44} {'kickoff -> first request':>25}   {'build -> first':>14}")
    for label, seconds in CREW_SCENARIOS:
        samples = [run(CREW_CHILD.format(root=str(ROOT), seconds=seconds)) for _ in range(args.repeat)]
        kickoff = statistics.median(x["kickoff"] for x in samples)
        built = statistics.median(x["first_request"] for x in samples)
        goal = f"build -> first ~ max({seconds:g} s, import) + one call" if seconds else "~ cold import + one call"
        print(f"{label:<44} {kickoff:>23.2f} s   {built:>12.2f} s   {goal}")

    warm = run(WARM.format(root=str(ROOT), calls=40))
    print(f"warm call, litellm.acompletion alone -> local server: {warm['bare'] * 1000:6.2f} ms   (about 7 ms here)")
    print(f"warm call, LLM.acomplete -> litellm -> local server: {warm['total'] * 1000:6.2f} ms")
    print(
        f"crew's own work per call (kwargs, parsing, usage, cost, event): {warm['own'] * 1000:.3f} ms   goal: < 0.5 ms"
    )


if __name__ == "__main__":
    main()
