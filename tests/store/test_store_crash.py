"""A `crew kickoff` killed mid-run, then `crew resume`: real litellm, real HTTP, a real process.

The 4-task chain talks to a local OpenAI-compatible server; the third task's request is
held until the test has killed the process. `crew resume` must ask the model only for
the unfinished tasks (counted at the server) and end with a clean run's output.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import threading
from collections import Counter

import pytest
from store_kit import crew, env, start, write

from crew import RunStore
from crew.testing import OpenAIServer, Reply
from crew.testing.replies import ChatRequest

CREW = """
    name: chain
    llm:
      model: openai/gpt-4o-mini
      api_base: {url}
      num_retries: 0
    agents:
      writer:
        role: Writer
        goal: Write one line per step
    tasks:
      t1: {{description: "step 1 about {{topic}}", expected_output: a line, agent: writer}}
      t2: {{description: "step 2 about {{topic}}", expected_output: a line, agent: writer}}
      t3: {{description: "step 3 about {{topic}}", expected_output: a line, agent: writer}}
      t4: {{description: "step 4 about {{topic}}", expected_output: a line, agent: writer}}
    inputs:
      topic: bees
    """


class Model:
    """The server's brain: answers "answer N (previous steps seen)"; holds one step's request when asked."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.hold: str | None = None
        self.arrived = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Reply:
        text = request.messages[-1]["content"]
        step = re.search(r"step (\d)", text).group(1)  # type: ignore[union-attr]
        seen = re.findall(r"answer (\d)", text)
        with self.lock:
            self.calls[step] += 1
            held = step == self.hold
        if held:
            self.arrived.set()
            return Reply.text("too late", delay=60)
        return Reply.text(f"answer {step} after [{','.join(seen)}]", prompt_tokens=50, completion_tokens=10)


@pytest.fixture(scope="module")
def model():
    brain = Model()
    with OpenAIServer(handler=brain) as server:
        brain.url = server.url  # type: ignore[attr-defined]
        yield brain


@pytest.fixture(scope="module")
def clean(model, tmp_path_factory) -> dict:
    folder = write(tmp_path_factory.mktemp("clean") / "chain", {"crew.yaml": CREW.format(url=model.url)})
    done = crew("kickoff", str(folder), "--json", "-q", environ=env(OPENAI_API_KEY="sk-test-key-1234"))
    assert done.returncode == 0, done.stderr
    return {**json.loads(done.stdout), "folder": folder}


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM], ids=["SIGKILL", "SIGINT", "SIGTERM"])
def test_killed_while_the_third_model_call_is_in_flight_then_resumed(model, clean, tmp_path, sig) -> None:
    folder = write(tmp_path / "chain", {"crew.yaml": CREW.format(url=model.url)})
    environ = env(OPENAI_API_KEY="sk-test-key-1234")
    with model.lock:
        model.calls.clear()
        model.hold = "3"
        model.arrived.clear()
    proc = start("kickoff", "-q", cwd=folder, environ=environ)
    try:
        assert model.arrived.wait(90), "the third task's request never arrived"
        proc.send_signal(sig)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    assert model.calls == Counter({"1": 1, "2": 1, "3": 1})

    store = RunStore(folder / ".crew" / "runs.db")
    (killed,) = store.runs()
    assert killed.status == "interrupted"  # SIGKILL leaves "running" behind: its process is gone
    assert (killed.usage.requests, killed.usage.total_tokens) == (2, 120)  # kept current: a resumed budget counts it
    assert [t.status for t in store.tasks(killed.id)][:2] == ["done", "done"]
    store.close()

    with model.lock:
        model.calls.clear()
        model.hold = None
    resumed = crew("resume", "--json", "-q", cwd=folder, environ=environ)
    assert resumed.returncode == 0, resumed.stderr
    assert model.calls == Counter({"3": 1, "4": 1})  # only the unfinished tasks reach the model
    out = json.loads(resumed.stdout)
    assert out["raw"] == clean["raw"] == "answer 4 after [1,2,3]"
    assert [t["raw"] for t in out["tasks_output"]] == [t["raw"] for t in clean["tasks_output"]]
    assert out["continued_from"] == killed.id
    assert out["usage"]["requests"] == 2 and out["usage"]["total_tokens"] == 120

    store = RunStore(folder / ".crew" / "runs.db")
    latest = store.run()
    assert (latest.status, latest.mode, latest.continued_from) == ("done", "resume", killed.id)
    assert [(t.name, t.reused) for t in store.tasks(latest.id)] == [
        ("t1", True),
        ("t2", True),
        ("t3", False),
        ("t4", False),
    ]


def test_replay_from_a_middle_task_on_the_command_line(model, clean, tmp_path) -> None:
    folder = tmp_path / "chain"
    shutil.copytree(clean["folder"], folder)  # the folder and its store: the run is found by its id
    with model.lock:
        model.calls.clear()
        model.hold = None
    run_id = clean["run_id"]
    done = crew("replay", run_id[:8], "--from", "t2", "--json", "-q", cwd=folder, environ=env(OPENAI_API_KEY="sk-x"))
    assert done.returncode == 0, done.stderr
    assert model.calls == Counter({"2": 1, "3": 1, "4": 1})
    out = json.loads(done.stdout)
    assert out["continued_from"] == run_id and out["raw"] == clean["raw"]
    shown = crew("show", "--json", cwd=folder)
    detail = json.loads(shown.stdout)
    assert detail["run"]["mode"] == "replay" and detail["run"]["from_task"] == "t2"
    assert [t["reused"] for t in detail["tasks"]] == [True, False, False, False]
    assert [c["task"] for c in detail["model_calls"]] == ["t2", "t3", "t4"]
    assert all(c["model"] == "openai/gpt-4o-mini" and c["usage"]["total_tokens"] == 60 for c in detail["model_calls"])
    assert all(c["usage"]["cost"] > 0 for c in detail["model_calls"])  # priced from litellm's bundled table


def test_max_cost_stops_the_cli_run_and_resume_with_a_larger_budget_finishes_it(model, tmp_path) -> None:
    folder = write(tmp_path / "chain", {"crew.yaml": CREW.format(url=model.url)})
    environ = env(OPENAI_API_KEY="sk-test-key-1234")
    with model.lock:
        model.calls.clear()
        model.hold = None
    stopped = crew("kickoff", "-q", "--max-cost", "0.00001", cwd=folder, environ=environ)
    assert stopped.returncode == 1
    assert "budget max_cost=$0.0000 reached before a model call of agent 'Writer' for task 't2'" in stopped.stderr
    assert model.calls == Counter({"1": 1})
    resumed = crew("resume", "-q", "--max-cost", "1", cwd=folder, environ=environ)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "answer 4 after [1,2,3]"
    assert model.calls == Counter({"1": 1, "2": 1, "3": 1, "4": 1})
    listed = json.loads(crew("runs", "--json", cwd=folder).stdout)
    assert [(r["status"], r["mode"], r["settings"].get("max_cost")) for r in listed] == [
        ("done", "resume", 1.0),
        ("failed", "kickoff", 0.00001),
    ]
