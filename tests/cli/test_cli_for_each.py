"""`crew kickoff PATH --for-each inputs.jsonl`: one JSON line per input, progress on stderr,
every bad line named by number, failures go on or stop, Ctrl-C says what finished."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from cli_kit import REPO, crew_env, run_crew

CREW_YAML = """
name: batch
llm: test
tools:
  nap: tools:nap
agents:
  writer:
    role: Writer
    goal: Write about {topic}
    backstory: Writes.
    tools: [nap]
tasks:
  write:
    description: Write one line about {topic}.
    expected_output: one line
    agent: writer
"""

TOOLS = '''
import time
from crew import tool

@tool
def nap(seconds: float = 0.0) -> str:
    """Wait a little (the topic 'boom' fails)."""
    return "rested"
'''


def batch_folder(crew_dir, tools: str = TOOLS) -> Path:
    return crew_dir({"crew.yaml": CREW_YAML, "tools.py": tools})


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_for_each_writes_one_json_line_per_input(crew_dir, tmp_path):
    folder = batch_folder(crew_dir)
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text("".join(json.dumps({"topic": f"t{i}"}) + "\n" for i in range(5)) + "\n")
    out = tmp_path / "results.jsonl"
    done = run_crew("kickoff", str(folder), "--for-each", str(inputs), "-o", str(out), "--ordered")
    assert done.returncode == 0, done.stderr
    rows = lines(out)
    assert [r["index"] for r in rows] == [0, 1, 2, 3, 4] and {r["status"] for r in rows} == {"done"}
    assert rows[3]["inputs"] == {"topic": "t3"} and "t3" in rows[3]["raw"]
    assert rows[0]["output"]["tasks_output"][0]["name"] == "write" and rows[0]["usage"]["total_tokens"] > 0
    tokens = sum(r["usage"]["total_tokens"] for r in rows)
    assert f"done: 5/5: 5 done · 0 failed · {tokens:,} tokens · wrote {out}" in done.stderr
    # without -o the lines go to stdout, and nothing else does
    piped = run_crew("kickoff", str(folder), "--for-each", str(inputs), "-q")
    assert piped.returncode == 0 and len(piped.stdout.splitlines()) == 5 and piped.stderr == ""
    assert sorted(json.loads(line)["index"] for line in piped.stdout.splitlines()) == [0, 1, 2, 3, 4]


def test_every_bad_line_is_named_by_its_number_and_nothing_runs(crew_dir, tmp_path):
    folder = batch_folder(crew_dir)
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('{"topic": "fine"}\n{"topic": oops}\n["a list"]\n\n{"subject": "x"}\n')
    out = tmp_path / "out.jsonl"
    bad = run_crew("kickoff", str(folder), "--for-each", str(inputs), "-o", str(out))
    assert bad.returncode == 2 and not out.exists()
    err = bad.stderr.splitlines()
    assert err[0].startswith(f"{inputs}:2: not valid JSON: Expecting value")
    assert err[1] == f'{inputs}:3: expected a JSON object of inputs (like {{"topic": "bees"}}), got list'
    assert err[2].startswith(f"{inputs}:5: input 'topic' has no value")
    assert err[3] == "crew: 3 errors; nothing was run" and "Traceback" not in bad.stderr
    missing = run_crew("kickoff", str(folder), "--for-each", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "--for-each" in missing.stderr and "no such file" in missing.stderr
    stray = run_crew("kickoff", str(folder), "--ordered")
    assert stray.returncode == 2 and "--ordered is for many kickoffs: add --for-each FILE.jsonl" in stray.stderr
    streamed = run_crew("kickoff", str(folder), "--for-each", str(inputs), "--stream")
    assert streamed.returncode == 2 and "--stream is for one kickoff; --for-each writes JSON Lines" in streamed.stderr


FAILING_TOOLS = '''
from crew import tool

@tool
def nap(seconds: float = 0.0) -> str:
    """Wait a little."""
    return "rested"
'''

FAILING_YAML = CREW_YAML.replace("tools: [nap]", "tools: [nap]\n    llm: test").replace(
    "    agent: writer", "    agent: writer\n    guardrail: tools:no_boom"
)


def test_on_error_continue_is_the_default_and_stop_skips_the_rest(crew_dir, tmp_path):
    tools = FAILING_TOOLS + ("\ndef no_boom(output):\n    return ('boom' not in output.raw, 'no booms')\n")
    folder = crew_dir({"crew.yaml": FAILING_YAML, "tools.py": tools})
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('{"topic": "a"}\n{"topic": "boom"}\n{"topic": "c"}\n{"topic": "d"}\n')
    out = tmp_path / "out.jsonl"
    went_on = run_crew("kickoff", str(folder), "--for-each", str(inputs), "-o", str(out), "--ordered")
    assert went_on.returncode == 1
    assert [r["status"] for r in lines(out)] == ["done", "failed", "done", "done"]
    assert "guardrail rejected" in lines(out)[1]["error"]
    assert "failed: 4/4: 3 done · 1 failed" in went_on.stderr
    stopped = run_crew(
        "kickoff", str(folder), "--for-each", str(inputs), "-o", str(out), "--ordered",
        "--on-error", "stop", "--max-concurrency", "1",
    )  # fmt: skip
    assert stopped.returncode == 1
    assert [r["status"] for r in lines(out)] == ["done", "failed", "skipped", "skipped"]
    assert "stopped: input 1 failed: task 'write' failed" in stopped.stderr


SLOW_TOOLS = '''
import time
from crew import tool

@tool
def nap(seconds: float = 0.0) -> str:
    """Wait a little."""
    time.sleep(0.4)
    return "rested"
'''


def test_ctrl_c_stops_the_batch_and_says_what_finished(crew_dir, tmp_path):
    folder = crew_dir({"crew.yaml": CREW_YAML, "tools.py": SLOW_TOOLS})
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("".join(json.dumps({"topic": f"t{i}"}) + "\n" for i in range(40)))
    out = tmp_path / "out.jsonl"
    # --live-tools: the nap really runs, so the batch cannot end before the signal comes
    proc = subprocess.Popen(
        [sys.executable, "-m", "crew.cli", "kickoff", str(folder), "--for-each", str(inputs), "-o", str(out),
         "--max-concurrency", "2", "--live-tools"],
        cwd=REPO, env=crew_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 2):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    finished = lines(out)
    assert 2 <= len(finished) < 40 and {r["status"] for r in finished} == {"done"}
    said = next(line for line in err.splitlines() if line.startswith("crew: interrupted; "))
    assert said.startswith(f"crew: interrupted; {len(finished)}/40: {len(finished)} done · 0 failed")
    assert said.endswith(f"results of finished inputs are in {out}")


def test_asking_for_ray_without_it_says_how_to_install_it(crew_dir, tmp_path):
    folder = batch_folder(crew_dir)
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('{"topic": "a"}\n')
    missing = tmp_path / "no_ray"
    (missing / "ray").mkdir(parents=True)
    (missing / "ray" / "__init__.py").write_text("raise ImportError(\"No module named 'ray'\")\n")  # as if absent
    env = crew_env(PYTHONPATH=f"{missing}:{REPO}")
    done = run_crew("kickoff", str(folder), "--for-each", str(inputs), "--backend", "ray", env=env, process=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "crew: the Ray backend needs Ray, which is not installed: pip install 'crew-agents[ray]'" in done.stderr


def test_kickoffs_waiting_for_approval_are_paused_lines_and_exit_3(crew_dir, tmp_path):
    yaml = CREW_YAML.replace("  nap: tools:nap", "  nap:\n    import: tools:nap\n    requires_approval: true")
    folder = crew_dir({"crew.yaml": yaml, "tools.py": TOOLS})
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text("".join(json.dumps({"topic": f"t{i}"}) + "\n" for i in range(2)))
    out = tmp_path / "results.jsonl"
    store = tmp_path / "runs.db"
    run = run_crew("kickoff", str(folder), "--for-each", str(inputs), "-o", str(out), "--store", str(store))
    assert run.returncode == 3, run.stderr
    rows = lines(out)
    assert [r["status"] for r in rows] == ["paused", "paused"]
    assert all(r["output"]["pending_approvals"] for r in rows)
    assert "paused: 2/2: 0 done · 0 failed · 2 paused" in run.stderr and "crew resume RUN" in run.stderr
    listed = run_crew("runs", str(folder), "--store", str(store), "--json")
    assert {r["id"] for r in json.loads(listed.stdout)} >= {r["run_id"] for r in rows}


def test_a_kickoff_whose_task_failed_under_on_error_continue_is_a_failed_line(crew_dir, tmp_path):
    """The run went on past its failed task, but the input did not succeed: its line says so, and why."""
    crew_yaml = CREW_YAML.replace("name: batch", "name: batch\non_error: continue").replace(
        "    agent: writer\n", "    agent: writer\n    guardrail: tools:never\n    guardrail_max_retries: 0\n"
    )
    tools = (
        TOOLS
        + """
def never(output):
    return (False, "never good enough")
"""
    )
    folder = crew_dir({"crew.yaml": crew_yaml, "tools.py": tools})
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text(json.dumps({"topic": "a"}) + "\n")
    out = tmp_path / "results.jsonl"
    done = run_crew("kickoff", str(folder), "--for-each", str(inputs), "-o", str(out))
    assert done.returncode == 1, done.stderr
    (row,) = lines(out)
    assert row["status"] == "failed" and row["output"]["status"] == "failed"
    assert row["error"].startswith("task 'write' failed: ") and "never good enough" in row["error"]


DOUBLING_YAML = """
name: doubling
llm: {{model: openai/gpt-4o-mini, api_base: "{base}", api_key: sk-batch, transport: native}}
tools:
  double: tools:double
agents:
  doubler: {{role: Doubler, goal: Double numbers, backstory: Exact., tools: [double]}}
tasks:
  double: {{description: "Double the number {{n}}.", expected_output: the number, agent: doubler}}
"""

DOUBLE = '''
from crew import tool

@tool
def double(x: int) -> int:
    """Double a number."""
    return 2 * x
'''


def test_a_wide_batch_on_the_native_door_writes_every_line_and_its_progress(crew_dir, tmp_path, openai_server):
    """All forty kickoffs at once, each a tool call and an answer over one pool: no line lost or wrong."""
    from crew.testing import Reply

    def answer(request):
        last = request.messages[-1]
        if last["role"] == "tool":
            return Reply.text(str(last["content"]))
        number = int(request.messages[-1]["content"].split("number ")[1].split(".")[0])
        return Reply.tools({"name": "double", "args": {"x": number}})

    openai_server.handler = answer
    folder = crew_dir({"crew.yaml": DOUBLING_YAML.format(base=openai_server.url), "tools.py": DOUBLE})
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text("".join(json.dumps({"n": i}) + "\n" for i in range(40)))
    done = run_crew("kickoff", str(folder), "--for-each", str(inputs), "--max-concurrency", "40", "--no-store")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(r["index"] for r in rows) == list(range(40))
    assert all(r["status"] == "done" and r["output"]["raw"] == str(2 * r["index"]) for r in rows)
    assert len(openai_server.requests) == 80
    assert any(line.startswith("[") and "40" in line for line in done.stderr.splitlines())  # the progress line
