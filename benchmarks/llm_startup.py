"""How long until the first model request leaves, and what a call costs, on either transport.

Run: python benchmarks/llm_startup.py [--repeat N] [--prewarm-scenarios]

Figures (issue 13), each from fresh processes against the local OpenAI-compatible server:

1. In-process, after ``import crew``: the first ``Crew.kickoff()`` of a one-task crew ->
   its first request at the server. Native transport: goal < 0.3 s, i.e. >= 3x faster than
   CrewAI's 1.0 s measured on this machine; the litellm path (its import, ~5 s) beside it.
2. Whole process: ``crew kickoff examples/trip_planner --llm openai/x`` with the base URL
   (``OPENAI_BASE_URL``) at the local server, start to exit: goal < 1 s, peak RSS < 100 MB
   (``getrusage(RUSAGE_CHILDREN).ru_maxrss`` of a wrapper process that runs only that
   command); the same crew through litellm (``transport: litellm``) beside it (~200 MB).
3. Warm per-call cost of ``LLM.acomplete`` against the same server, native vs litellm,
   interleaved in one process, and crew's own work per call on each door.

``--prewarm-scenarios`` adds the older litellm-only figures: how much prewarming litellm
in a background thread saves when the process does other work before its first call
(I/O-bound setup overlaps the import fully, CPU-bound setup shares the GIL with it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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
        llm = LLM("openai/gpt-4o-mini", api_base=server.url, api_key="sk-test", transport="litellm")
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

FIRST_KICKOFF = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, {root!r})
    from crew.testing import OpenAIServer, Reply   # the server is the test's, not the crew's: started first

    with OpenAIServer(handler=lambda request: Reply.text("ok")) as server:
        imported_at = time.perf_counter()
        import crew
        from crew import Agent, Crew, Task
        from crew.models import LLM
        after_import = time.perf_counter()
        llm = LLM("openai/gpt-4o-mini", api_base=server.url, api_key="sk-test", transport={transport!r})
        agent = Agent(role="Writer", goal="Write", llm=llm)
        crew = Crew(agents=[agent], tasks=[Task(description="Say ok", expected_output="ok", agent=agent)])
        kickoff_at = time.time()
        crew.kickoff()
        first = server.requests[0].received_at
        print(json.dumps({{"kickoff": first - kickoff_at, "import_crew": after_import - imported_at,
                          "litellm": "litellm" in sys.modules}}))
""")

CLI_WRAPPER = textwrap.dedent("""
    import json, resource, subprocess, sys, time
    started = time.perf_counter()
    done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024   # KiB on Linux -> MiB
    print(json.dumps({"wall": wall, "rss": peak, "rc": done.returncode, "err": done.stderr[-500:]}))
""")

WARM = textwrap.dedent("""
    import asyncio, json, sys, time
    sys.path.insert(0, {root!r})
    from crew.models import LLM, load_litellm
    from crew.models import openai_door
    from crew.models.attempts import Attempt
    from crew.testing import OpenAIServer, Reply

    litellm = load_litellm()
    with OpenAIServer(handler=lambda request: Reply.text("ok")) as server:
        native = LLM("openai/gpt-4o-mini", api_base=server.url, api_key="sk-test", transport="native")
        viallm = LLM("openai/gpt-4o-mini", api_base=server.url, api_key="sk-test", transport="litellm")
        messages = [{{"role": "user", "content": "hi"}}]

        async def timed(llm, n):
            started = time.perf_counter()
            for _ in range(n):
                await llm.acomplete(messages)
            return (time.perf_counter() - started) / n

        async def main():
            await timed(native, 20); await timed(viallm, 20)          # warm both paths
            rounds = [(await timed(native, {calls}), await timed(viallm, {calls})) for _ in range(5)]
            return min(r[0] for r in rounds), min(r[1] for r in rounds)   # interleaved: same load for both

        native_call, litellm_call = asyncio.run(main())
        raw = litellm.completion(**viallm.open().request(messages, None))
        reply = {{"choices": [{{"message": {{"role": "assistant", "content": "ok"}}, "finish_reason": "stop"}}],
                  "usage": {{"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}}}
        started = time.perf_counter()
        for _ in range(1000):   # crew's own work per call, litellm door: settings, kwargs, parsing, usage, cost, event
            door = viallm.open()
            door.request(messages, None)
            door.finish(litellm, raw, Attempt(1))
        own_litellm = (time.perf_counter() - started) / 1000
        started = time.perf_counter()
        for _ in range(1000):   # the same on the native door: settings, endpoint, body, parsing, usage, cost, event
            call = openai_door._Call(native.open().settings, messages, None, stream=False)
            call.finish(reply, Attempt(1))
        own_native = (time.perf_counter() - started) / 1000
        print(json.dumps({{"native": native_call, "litellm": litellm_call,
                          "own_native": own_native, "own_litellm": own_litellm}}))
""")

CREWAI_FIRST_REQUEST = 1.0  # seconds, CrewAI's first kickoff -> first request, measured on this machine (issue 13)

SCENARIOS = [
    # label, prewarm, setup kind, setup seconds
    ("no setup work, no prewarm", False, None, 0.0),
    ("no setup work, prewarm", True, None, 0.0),
    ("3 s I/O-bound setup, no prewarm", False, "io", 3.0),
    ("3 s I/O-bound setup, prewarm", True, "io", 3.0),
    ("1 s CPU-bound setup, no prewarm", False, "cpu", 1.0),
    ("1 s CPU-bound setup, prewarm", True, "cpu", 1.0),
]


def run(code: str, *args: str, env: dict[str, str] | None = None, cwd: str | None = None) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=180,
        cwd=cwd,
        env=env or {"PATH": "/usr/bin:/bin", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR"},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def first_kickoff(repeat: int) -> None:
    print(f"{'first kickoff -> first request (after import crew)':<52} {'median':>8} {'min':>7}   goal")
    figures: dict[str, float] = {}
    for transport in ("native", "litellm"):
        samples = [run(FIRST_KICKOFF.format(root=str(ROOT), transport=transport)) for _ in range(repeat)]
        figures[transport] = median = statistics.median(x["kickoff"] for x in samples)
        best = min(x["kickoff"] for x in samples)
        loaded = any(x["litellm"] for x in samples)
        goal = "< 0.3 s, litellm never imported" if transport == "native" else "as today (its import)"
        print(f"  {transport:<50} {median:>6.3f} s {best:>5.3f} s   {goal}  [litellm imported: {loaded}]")
    print(
        f"  native vs CrewAI's {CREWAI_FIRST_REQUEST:.1f} s: {CREWAI_FIRST_REQUEST / figures['native']:.1f}x faster "
        f"(goal >= 3x); vs the litellm path: {figures['litellm'] / figures['native']:.1f}x faster"
    )


def whole_process(repeat: int) -> None:
    import tempfile

    from crew.testing import OpenAIServer, Reply

    example = ROOT / "examples" / "trip_planner"
    print(f"{'crew kickoff examples/trip_planner, start -> exit':<52} {'median':>8} {'peak RSS':>9}   goal")
    with OpenAIServer(handler=lambda request: Reply.text("Thought: done\nFinal Answer: a fine plan")) as server:
        env = {
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(ROOT),
            "OPENAI_BASE_URL": server.url,
            "OPENAI_API_KEY": "sk-bench",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_LOG": "ERROR",
        }
        with tempfile.TemporaryDirectory() as tmp:
            via_litellm = Path(tmp) / "trip_planner"
            shutil.copytree(example, via_litellm)
            yaml = (via_litellm / "crew.yaml").read_text(encoding="utf-8")
            mapping = f"llm: {{model: openai/x, api_base: '{server.url}', transport: litellm}}"
            (via_litellm / "crew.yaml").write_text(
                "\n".join(mapping if line.startswith("llm:") else line for line in yaml.splitlines()) + "\n",
                encoding="utf-8",
            )
            commands = {
                "native: --llm openai/x (OPENAI_BASE_URL)": [str(example), "--llm", "openai/x"],
                "litellm: llm {model: openai/x, transport: litellm}": [str(via_litellm)],
            }
            for label, args in commands.items():
                command = [sys.executable, "-m", "crew.cli", "kickoff", *args, "--json"]
                # in the temporary folder: the crew writes its output file under the working directory
                run(CLI_WRAPPER, *command, env=env, cwd=tmp)  # warm-up: bytecode caches, as an installed copy has
                samples = [run(CLI_WRAPPER, *command, env=env, cwd=tmp) for _ in range(repeat)]
                failed = [x["err"] for x in samples if x["rc"] != 0]
                if failed:
                    print(f"  {label}: FAILED: {failed[0]}")
                    continue
                wall = statistics.median(x["wall"] for x in samples)
                rss = statistics.median(x["rss"] for x in samples)
                goal = "< 1 s, < 100 MB" if label.startswith("native") else "(~200 MB)"
                print(f"  {label:<50} {wall:>6.2f} s {rss:>6.0f} MB   {goal}")


def per_call() -> None:
    warm = run(WARM.format(root=str(ROOT), calls=40))
    print("warm call, LLM.acomplete -> local server (best of 5 interleaved rounds)")
    print(f"  native transport:  {warm['native'] * 1000:7.3f} ms per call")
    print(f"  litellm transport: {warm['litellm'] * 1000:7.3f} ms per call   ({warm['litellm'] / warm['native']:.1f}x)")
    print(
        f"  crew's own work per call: native {warm['own_native'] * 1000:.3f} ms, "
        f"litellm {warm['own_litellm'] * 1000:.3f} ms   goal: < 0.5 ms"
    )


def prewarm_scenarios(repeat: int) -> None:
    print(f"{'litellm: scenario':<36} {'build -> first request, median (min)':>38}   goal")
    figures: dict[str, float] = {}
    for label, prewarm, setup, seconds in SCENARIOS:
        code = CHILD.format(root=str(ROOT), prewarm=prewarm, setup=setup, seconds=seconds)
        samples = [run(code)["first_request"] for _ in range(repeat)]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per figure (median printed)")
    parser.add_argument("--prewarm-scenarios", action="store_true", help="also the litellm prewarm figures")
    args = parser.parse_args()
    first_kickoff(args.repeat)
    whole_process(args.repeat)
    per_call()
    if args.prewarm_scenarios:
        prewarm_scenarios(args.repeat)


if __name__ == "__main__":
    main()
