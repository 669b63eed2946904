"""How fast the `crew` command answers: wall time of real processes, median of N runs.

Run: python benchmarks/cli_startup.py [--runs 5]

Each figure is the wall time of a fresh `crew ...` process (the console script's
interpreter, run as `python -m crew.cli` so no PATH lookup is involved), from spawn to
exit, median of N runs after one warm-up run (which fills the .pyc caches, even when the
environment sets PYTHONDONTWRITEBYTECODE).

Goals (issue 5):
- `crew --help`                                   under 0.3 s
- `crew validate examples/<each>`                 under 0.3 s
- `crew kickoff examples/<each> --llm test`       under 1 s, and litellm never imported

For scale: Python itself starts in about 20 ms here; importing click costs about 55 ms,
typer about 270 ms, rich's console and table about 150 ms, litellm about 5 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.name for p in (ROOT / "examples").iterdir() if (p / "crew.yaml").is_file())


def wall(args: list[str], runs: int, env: dict[str, str], cwd: Path) -> tuple[float, float, float]:
    """Median and best wall seconds of `crew ARGS`, and its median CPU seconds (user + system).

    The CPU figure helps read the wall one on a busy machine: wall minus CPU is waiting.
    """
    command = [sys.executable, "-m", "crew.cli", *args]
    # warm-up: write the bytecode caches, as any installed copy has them (even where the
    # environment sets PYTHONDONTWRITEBYTECODE, which would leave every run compiling from source)
    warm = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(command, env=warm, cwd=cwd, capture_output=True)
    times, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            raise SystemExit(f"crew {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return statistics.median(times), min(times), statistics.median(cpu)


def imports_litellm(args: list[str], env: dict[str, str], cwd: Path) -> bool:
    """Run the command in-process under a probe that reports whether litellm got imported."""
    code = (
        "import sys, atexit; atexit.register(lambda: print('LITELLM', 'litellm' in sys.modules, "
        "file=sys.stderr)); sys.argv = ['crew', *sys.argv[1:]]; from crew.cli import main; "
        "raise SystemExit(main())"
    )
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=cwd, capture_output=True, text=True)
    return "LITELLM True" in done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    env = {k: v for k, v in os.environ.items() if k != "CREW_LLM"}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    out = ROOT / ".crew" / "bench-out"
    rows: list[tuple[str, tuple[float, float, float], float, str]] = []

    rows.append(("crew --help", wall(["--help"], runs, env, ROOT), 0.3, ""))
    for name in EXAMPLES:
        rows.append(
            (f"crew validate examples/{name}", wall(["validate", f"examples/{name}"], runs, env, ROOT), 0.3, "")
        )
    for name in EXAMPLES:
        args = ["kickoff", f"examples/{name}", "--llm", "test", "--out", str(out), "-q"]
        rows.append(
            (
                f"crew kickoff examples/{name} --llm test",
                wall(args, runs, env, ROOT),
                1.0,
                "litellm imported!" if imports_litellm(args, env, ROOT) else "litellm not imported",
            )
        )

    width = max(len(r[0]) for r in rows)
    load = f", load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    print(
        f"wall time of a fresh process, median of {runs} runs ({os.cpu_count()} CPUs{load}, "
        f"Python {sys.version.split()[0]})"
    )
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print(
            "  (PYTHONDONTWRITEBYTECODE is set: the warm-up run wrote the .pyc caches anyway; "
            "without them each command compiles crew from source, about 50 ms more)"
        )
    print(f"  {'command':<{width}}  {'median':>9}  {'best':>9}  {'cpu':>9}  goal")
    for label, (median, best, cpu), goal, note in rows:
        verdict = "ok" if median < goal else "OVER GOAL"
        print(
            f"  {label:<{width}}  {median * 1000:6.0f} ms  {best * 1000:6.0f} ms  {cpu * 1000:6.0f} ms  "
            f"< {goal * 1000:.0f} ms {verdict}  {note}".rstrip()
        )


if __name__ == "__main__":
    main()
