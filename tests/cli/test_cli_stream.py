"""``crew kickoff --stream``: JSON Lines for programs, whole prefixed lines when piped, headings on a terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys

from cli_kit import EXAMPLES, REPO, crew_env, run_crew, terminal_screen


def test_json_stream_writes_one_event_per_line_ending_with_the_output(tmp_path):
    done = run_crew(
        "kickoff", str(EXAMPLES / "trip_planner"), "--llm", "test", "--stream", "--json", "-q", cwd=tmp_path
    )  # its out/ under tmp_path
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["type"] == "run.started" and events[-1]["type"] == "output"
    kinds = {e["type"] for e in events}
    assert {"task.started", "agent.turn", "text.delta", "tool.started", "tool.finished", "task.finished"} <= kinds
    plan = "".join(e["text"] for e in events if e["type"] == "text.delta" and e["task"] == "plan")
    final = events[-1]["output"]
    assert (events[-1]["status"], events[-1]["error"]) == ("done", None)
    assert plan == final["raw"]  # the last task's deltas are the run's answer
    assert {e["run_id"] for e in events[:-1]} == {final["run_id"]}


def test_a_json_stream_that_fails_or_is_interrupted_still_ends_with_one_typed_output_line(crew_dir):
    """A failed run's stream just stopped; an interrupted one ended in a pretty-printed, untyped document."""
    import signal
    import time

    folder = crew_dir(
        {
            "crew.yaml": """
        llm: test
        tools:
          nap: tools:nap
        agents:
          w: {role: W, goal: G, tools: [nap]}
        tasks:
          t: {description: "{what}", agent: w, guardrail: tools:never, guardrail_max_retries: 0}
        """,
            "tools.py": """
        import os
        import time
        from crew import tool

        def never(output):
            return (False, "never good enough")

        @tool
        def nap(seconds: float = 0.0) -> str:
            \"\"\"Rest.\"\"\"
            time.sleep(30 if os.environ.get("CREW_TEST_NAP") else 0)  # only the run to interrupt waits
            return "rested"
        """,
        }
    )
    failed = run_crew("kickoff", str(folder), "--live-tools", "--stream", "--json", "-q", "--no-store", "-i", "what=D")
    assert failed.returncode == 1
    last = json.loads(failed.stdout.splitlines()[-1])
    assert last["type"] == "output" and last["status"] == "failed" and "never good enough" in last["error"]
    command = [
        sys.executable,
        "-m",
        "crew.cli",
        "kickoff",
        str(folder),
        "--live-tools",
        "--stream",
        "--json",
        "-q",
        "--no-store",
    ]
    process = subprocess.Popen(
        [*command, "-i", "what=use nap"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=crew_env(CREW_TEST_NAP="1"),
        cwd=REPO,
    )
    assert process.stdout is not None
    for line in process.stdout:  # the test model calls the tool: wait until it runs
        if json.loads(line)["type"] == "tool.started":
            break
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=30)
    lines = rest.decode().splitlines()
    assert process.returncode == 130 and lines
    final = json.loads(lines[-1])  # one line, typed
    assert final["type"] == "output" and final["status"] == "interrupted"


def test_piped_stream_prints_whole_lines_prefixed_with_their_task(tmp_path):
    done = run_crew("kickoff", str(EXAMPLES / "trip_planner"), "--llm", "test", "--stream", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines and all(line.startswith(("[food] ", "[sights] ", "[logistics] ", "[plan] ")) for line in lines)
    assert any(line.startswith("[plan] Test answer for: Task: Write a 2-day itinerary") for line in lines)
    assert "done: 4 done" in done.stderr


def test_terminal_stream_shows_each_tasks_text_under_its_name(tmp_path):
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "crew.cli", "kickoff", str(EXAMPLES / "trip_planner"), "--llm", "test", "--stream"],
        cwd=tmp_path,
        env=crew_env(TERM="xterm", PYTHONPATH=str(REPO)),
        stdin=follower,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    data = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed its side
            break
        if not chunk:
            break
        data += chunk
    assert proc.wait(30) == 0
    os.close(leader)
    screen = terminal_screen(data.decode())
    headings = [line for line in screen if line.startswith("── ")]
    assert "── plan (Itinerary planner) ──" in headings
    after = screen[screen.index("── plan (Itinerary planner) ──") + 1]
    assert after.startswith("Test answer for: Task: Write a 2-day itinerary")
