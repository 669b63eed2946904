"""Which addresses do Ray's processes try to reach? Plain ``ray.init`` against crew's ``start_local``.

Each variant starts a local Ray instance, runs two kickoffs as Ray tasks and stops it,
under ``strace -f -e trace=connect`` inside a network namespace with only loopback
(``unshare -n``): every attempt is recorded, none can leave. Needs root, strace, unshare.

    python benchmarks/ray_isolation.py

Goal: 0 attempts past loopback for crew's instance.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PROBE = """
import sys, time
sys.path.insert(0, {repo!r})
from crew import Agent, Crew, Task
from crew.testing import TestModel
started = time.time()
if {plain!r}:
    import ray
    ray.init(num_cpus=1, include_dashboard=False)
else:
    from crew.backends import ray as ray_backend
    ray_backend.start_local(num_cpus=1)
agent = Agent(role="r", goal="g", backstory="b", llm=TestModel())
crew = Crew(agents=[agent], tasks=[Task(description="about {{topic}}", expected_output="x", agent=agent)])
crew.kickoff_for_each([{{"topic": "a"}}, {{"topic": "b"}}], backend="ray")
time.sleep(5)
import ray; ray.shutdown()
print(started)
"""

LOOPBACK = re.compile(r'inet_addr\("127\.|inet_pton\(AF_INET6, "(::1|::ffff:127\.[0-9.]+)"|AF_UNIX')


def attempts(plain: bool) -> tuple[list[str], float]:
    with tempfile.TemporaryDirectory() as folder:
        log, script = Path(folder) / "connect.log", Path(folder) / "probe.py"
        script.write_text(PROBE.format(repo=str(REPO), plain=plain))
        env = {**os.environ, "HOME": folder, "PYTHONPATH": str(REPO)}
        for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_MODE", "RAY_USAGE_STATS_ENABLED", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"):
            env.pop(name, None)
        trace = f"strace -f -qq --seccomp-bpf -ttt -e trace=connect -o {log} {sys.executable} {script}"
        done = subprocess.run(
            ["unshare", "-n", "sh", "-c", f"ip link set lo up && exec {trace}"],
            env=env, capture_output=True, text=True, timeout=180, cwd=folder,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(done.stderr[-3000:])
        started = float(done.stdout.split()[-1])
        lines = [line for line in log.read_text().splitlines() if "connect(" in line]
        return [line for line in lines if not LOOPBACK.search(line)], started


def main() -> None:
    if os.geteuid() != 0:
        raise SystemExit("needs root (unshare -n)")
    for label, plain in (("plain ray.init", True), ("crew start_local", False)):
        t0 = time.perf_counter()
        outside, started = attempts(plain)
        spent = time.perf_counter() - t0
        print(f"{label:18s} attempts past loopback: {len(outside):2d}   (goal for crew: 0; {spent:.1f}s)")
        for line in outside:
            when = float(line.split()[1]) - started
            target = re.search(r"sin_port=htons\((\d+)\), sin_addr=inet_addr\(\"([0-9.]+)\"\)", line)
            where = f"{target.group(2)}:{target.group(1)}" if target else line
            print(f"    +{when:5.2f}s after start  {where}")


if __name__ == "__main__":
    main()
