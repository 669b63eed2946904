"""Pause in one process, decide and resume in another: the run store carries a paused run.

The model is real litellm against the local OpenAI-compatible server, which counts the
model calls across all the processes; the tool appends to a file, which counts its runs.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from crew import Agent, Crew, Task, tool
from crew.models import LLM
from crew.testing import Reply

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_kit import in_process  # isort: skip  (tests/cli holds the in-process runner)

REPO = Path(__file__).resolve().parents[2]

TOOLS = '''
from pathlib import Path
from crew import tool

LOG = Path(__file__).parent / "ran.log"

@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    with LOG.open("a") as fh:
        fh.write(path + "\\n")
    return f"deleted {path}"
'''


def crew_folder(tmp_path: Path, url: str) -> Path:
    folder = tmp_path / "tidy"
    folder.mkdir()
    (folder / "tools.py").write_text(TOOLS)
    (folder / "crew.yaml").write_text(
        textwrap.dedent(
            f"""
            name: tidy
            llm: {{model: openai/gpt-4o-mini, api_base: "{url}", api_key: sk-test, num_retries: 0}}
            tools:
              delete_file: {{import: tools:delete_file, requires_approval: true}}
            agents:
              ops: {{role: Operator, goal: Keep the disk tidy, tools: [delete_file]}}
            tasks:
              tidy: {{description: Remove the old log, expected_output: what was removed, agent: ops}}
            """
        )
    )
    return folder


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in ("CREW_LLM", "TERM")}
    out.update(PYTHONPATH=str(REPO), LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONUNBUFFERED="1")
    return out


def crew_cmd(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The ``crew`` command in this process, as a process would run it (cli_kit.in_process)."""
    return in_process(*args, cwd=cwd, env=env())


def paused_run(folder: Path) -> tuple[str, str]:
    done = crew_cmd("kickoff", str(folder), cwd=folder.parent)
    assert done.returncode == 3, done.stderr
    assert "paused: 1 tool call(s) wait" in done.stderr
    assert not any(line.startswith("done: ") for line in done.stderr.splitlines())  # it said "done: 1 paused"
    line = next(line for line in done.stderr.splitlines() if line.startswith("approve with:"))
    run, call_id = line.split()[4:6]
    assert f"crew resume {run}" in done.stderr
    return run, call_id


def test_pause_then_approve_and_resume_in_other_processes(openai_server, tmp_path):
    openai_server.enqueue(
        Reply.tools({"name": "delete_file", "args": {"path": "/tmp/old.log"}}), Reply.text("Removed /tmp/old.log.")
    )
    folder = crew_folder(tmp_path, openai_server.url)
    run, call_id = paused_run(folder)
    assert len(openai_server.requests) == 1 and not (folder / "ran.log").exists()

    approved = crew_cmd("approve", run, call_id, "--path", str(folder), cwd=tmp_path)
    assert approved.returncode == 0, approved.stderr
    assert f"continue it with: crew resume {run}" in approved.stderr

    resumed = crew_cmd("resume", run, "--path", str(folder), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "Removed /tmp/old.log."
    assert len(openai_server.requests) == 2  # the turn that asked for the tool was not asked again
    assert (folder / "ran.log").read_text() == "/tmp/old.log\n"  # the approved call ran once
    last = openai_server.requests[-1].messages[-1]
    assert last["role"] == "tool" and last["content"] == "deleted /tmp/old.log"
    late = crew_cmd("approve", run, call_id, "--deny", "too late", "--path", str(folder), cwd=tmp_path)
    assert late.returncode == 2 and "was continued already" in late.stderr  # it said "denied", to no effect


def test_a_denied_call_reaches_the_model_as_a_persons_refusal(openai_server, tmp_path):
    openai_server.enqueue(
        Reply.tools({"name": "delete_file", "args": {"path": "/tmp/old.log"}}), Reply.text("Left it alone.")
    )
    folder = crew_folder(tmp_path, openai_server.url)
    run, call_id = paused_run(folder)
    unknown = crew_cmd("approve", run, "call_nope", "--path", str(folder), cwd=tmp_path)
    assert unknown.returncode != 0 and "no call 'call_nope' waiting" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    denied = crew_cmd("approve", run, call_id, "--deny", "not today", "--path", str(folder), cwd=tmp_path)
    assert denied.returncode == 0, denied.stderr
    resumed = crew_cmd("resume", run, "--path", str(folder), "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["raw"] == "Left it alone."
    assert openai_server.requests[-1].messages[-1]["content"] == "denied by a person: not today"
    assert not (folder / "ran.log").exists() and len(openai_server.requests) == 2


def test_a_resumed_run_streams_its_events_ending_with_the_output(openai_server, tmp_path):
    openai_server.enqueue(
        Reply.tools({"name": "delete_file", "args": {"path": "/tmp/old.log"}}), Reply.text("Removed the old log.")
    )
    folder = crew_folder(tmp_path, openai_server.url)
    run, call_id = paused_run(folder)
    assert crew_cmd("approve", run, call_id, "--path", str(folder), cwd=tmp_path).returncode == 0
    resumed = crew_cmd("resume", run, "--path", str(folder), "--stream", "--json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    events = [json.loads(line) for line in resumed.stdout.splitlines()]
    assert events[0]["type"] == "run.started" and events[-1]["type"] == "output"
    text = "".join(e["text"] for e in events if e["type"] == "text.delta")
    assert text == events[-1]["output"]["raw"] == "Removed the old log."
    assert {e["run_id"] for e in events[:-1]} == {events[-1]["output"]["run_id"]}
    assert (folder / "ran.log").read_text() == "/tmp/old.log\n" and len(openai_server.requests) == 2


def test_the_terminal_prompt_edits_the_arguments(openai_server, tmp_path):
    openai_server.enqueue(
        Reply.tools({"name": "delete_file", "args": {"path": "/"}}), Reply.text("Removed what you allowed.")
    )
    folder = crew_folder(tmp_path, openai_server.url)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "crew.cli", "kickoff", str(folder)],
        cwd=tmp_path,
        env={**env(), "TERM": "dumb"},
        stdin=follower,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    seen = b""
    answers = [(b"[e]dit arguments:", b"e\n"), (b"new arguments as JSON:", b'{"path": "/tmp/just-this"}\n')]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        if answers and answers[0][0] in seen:
            os.write(leader, answers.pop(0)[1])
        if proc.poll() is not None and not ready:
            break
    assert proc.wait(30) == 0, seen.decode(errors="replace")
    os.close(leader)
    text = seen.decode(errors="replace")
    assert "agent 'Operator' (task 'tidy') wants to call delete_file" in text and '{"path": "/"}' in text
    assert (folder / "ran.log").read_text() == "/tmp/just-this\n"
    assert openai_server.requests[-1].messages[-1]["content"] == "deleted /tmp/just-this"


RAN: list[str] = []


@tool(requires_approval=True)
def wipe(path: str) -> str:
    """Wipe a folder."""
    RAN.append(path)
    return f"wiped {path}"


def test_python_resume_with_approvals_continues_a_stored_paused_run(openai_server, tmp_path):
    openai_server.enqueue(Reply.tools({"name": "wipe", "args": {"path": "/tmp/cache"}}), Reply.text("Wiped."))
    llm = LLM("openai/gpt-4o-mini", api_base=openai_server.url, api_key="sk-test", num_retries=0)
    agent = Agent(role="Operator", goal="g", llm=llm, tools=[wipe])
    task = Task(name="wipe", description="Wipe the cache", expected_output="x", agent=agent)
    crew = Crew(agents=[agent], tasks=[task], store=tmp_path / "runs.db")
    paused = crew.kickoff()
    assert paused.status == "paused" and RAN == []
    (request,) = paused.pending_approvals
    again = Crew(agents=[agent], tasks=[task], store=tmp_path / "runs.db")  # a fresh object, as another process has
    out = again.resume(paused.run_id, approvals={request.call_id: True})
    assert out.status == "done" and out.raw == "Wiped." and RAN == ["/tmp/cache"]
    assert len(openai_server.requests) == 2


def test_python_stream_resume_yields_the_continued_runs_events_then_its_output(openai_server, tmp_path):
    openai_server.enqueue(Reply.tools({"name": "wipe", "args": {"path": "/tmp/stream"}}), Reply.text("Wiped it."))
    llm = LLM("openai/gpt-4o-mini", api_base=openai_server.url, api_key="sk-test", num_retries=0)
    agent = Agent(role="Operator", goal="g", llm=llm, tools=[wipe])
    task = Task(name="wipe", description="Wipe the cache", expected_output="x", agent=agent)
    paused = Crew(agents=[agent], tasks=[task], store=tmp_path / "runs.db").kickoff()
    (request,) = paused.pending_approvals
    again = Crew(agents=[agent], tasks=[task], store=tmp_path / "runs.db")
    items = list(again.stream_resume(paused.run_id, approvals={request.call_id: True}))
    out, events = items[-1], items[:-1]
    assert out.status == "done" and out.raw == "Wiped it." and out.run_id != paused.run_id
    assert type(events[0]).__name__ == "RunStarted" and {e.run_id for e in events} == {out.run_id}
    finished = [e for e in events if type(e).__name__ == "ToolCallFinished"]
    assert [e.tool for e in finished] == ["wipe"] and RAN[-1] == "/tmp/stream"
    assert "".join(e.text for e in events if type(e).__name__ == "TextDelta") == "Wiped it."
