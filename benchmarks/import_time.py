"""Import cost of crew against pydantic's, in fresh processes.

Goal (issue 2): ``python -c "import crew"`` costs at most twice
``python -c "from pydantic import BaseModel"``, medians of interleaved runs. The
public names are loaded on first access, so the line users actually write
(``from crew import Agent, Crew, Task, tool``) is printed too, for honesty, and so
is the list of heavy modules that must stay unloaded until a run needs them.

    python benchmarks/import_time.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

SNIPPETS = {
    "python -c pass": "pass",
    "from pydantic import BaseModel": "from pydantic import BaseModel",
    "import crew": "import crew",
    "from crew import Agent, Crew, Task, tool": "from crew import Agent, Crew, Task, tool",
}
HEAVY = ("litellm", "networkx", "structlog", "yaml", "rich", "asyncio", "httpx")


def wall(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    times: dict[str, list[float]] = {label: [] for label in SNIPPETS}
    for _ in range(runs):  # interleaved, so a busy moment hits every snippet alike
        for label, code in SNIPPETS.items():
            times[label].append(wall(code))
    medians = {label: statistics.median(values) for label, values in times.items()}
    base = medians["from pydantic import BaseModel"]
    load = os.getloadavg()[0]
    print(f"median wall of {runs} interleaved fresh processes (load average {load:.1f})")
    for label, value in medians.items():
        print(f"  {label:45s} {value * 1000:7.0f} ms   {value / base:4.2f} x pydantic")
    verdict = "ok" if medians["import crew"] <= 2 * base else "OVER GOAL"
    print(f"goal: import crew <= 2 x pydantic ({2 * base * 1000:.0f} ms): {verdict}")
    probe = "import sys; from crew import Agent, Crew, Task, tool; print(' '.join(m for m in %r if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", probe % (HEAVY,)], capture_output=True, text=True, check=True)
    print(f"heavy modules loaded by `from crew import Agent, Crew, Task, tool`: {loaded.stdout.strip() or 'none'}")


if __name__ == "__main__":
    main()
