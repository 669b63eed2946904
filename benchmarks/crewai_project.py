"""What reading a CrewAI project costs, beside loading the same crew written natively.

Run: python benchmarks/crewai_project.py [--runs 20]

1. Static read of crew.py alone (ast parse + plan): goal under 5 ms.
2. ``load_project`` of the latest_ai fixture in one process, warm, median of N: crew.py
   read, types.py and the tool modules imported with the CrewAI stand-in, output models
   built from crew.py's classes. Goal under 50 ms. The project's modules are imported anew
   each time (they leave sys.modules after every load, by design), while the migrated
   crew.yaml's tools.py stays imported, so its warm figure is shown for scale only.
3. CPU time of ``crew validate`` on each, fresh processes (what a user waits for): goal
   the CrewAI project within 1.2x of its migrated crew folder. Both import the project's
   modules; this fixture's LangChain tool costs about 0.5 s of langchain_core import alone.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crew.config import load_project  # noqa: E402 - after the path is set
from crew.config.crewai.migrate import migrate  # noqa: E402
from crew.config.crewai.reader import read_crew_file  # noqa: E402

PROJECT = ROOT / "tests" / "config" / "crewai" / "projects" / "latest_ai"


def median_ms(fn, runs: int) -> float:
    fn()  # warm: .pyc files, pydantic's first schema builds
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def cpu_ms(args: list[str], runs: int) -> float:
    """CPU time (user + system) of a fresh `crew` process: steady on a shared, loaded machine, unlike wall time."""
    cmd = [sys.executable, "-m", "crew.cli", *args]
    subprocess.run(cmd, capture_output=True, check=True, cwd=ROOT)
    times = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, capture_output=True, check=True, cwd=ROOT)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    crew_py = PROJECT / "src" / "latest_ai" / "crew.py"
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "latest_ai"
        shutil.copytree(PROJECT, project)
        native = migrate(project).folder
        read = median_ms(lambda: read_crew_file(crew_py, "crew.py"), runs)
        crewai = median_ms(lambda: load_project(project), runs)
        plain = median_ms(lambda: load_project(native), runs)
        process_runs = max(3, runs // 4)
        crewai_cpu = cpu_ms(["validate", str(project)], process_runs)
        native_cpu = cpu_ms(["validate", str(native)], process_runs)
    print(f"crew.py static read                 {read:8.2f} ms   goal < 5 ms")
    print(f"load_project, CrewAI project        {crewai:8.2f} ms   goal < 50 ms")
    print(f"load_project, migrated crew.yaml    {plain:8.2f} ms   (tools.py cached: for scale)")
    print(f"crew validate, CrewAI project       {crewai_cpu:8.0f} ms CPU")
    print(f"crew validate, migrated crew.yaml   {native_cpu:8.0f} ms CPU")
    print(f"  ratio CrewAI / migrated           {crewai_cpu / native_cpu:8.2f} x    goal < 1.2 x")


if __name__ == "__main__":
    main()
