"""A paused run is continued once, runs what the model asked, and its decisions say what they replace.

The real ``crew`` command in separate processes (pause, approve, show, resume), a model
served by the local OpenAI-compatible server, and a tool that appends each call to a file.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from crew.testing import ChatRequest, OpenAIServer, Reply

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_kit import crew_env, run_crew, write  # isort: skip  (tests/cli holds the helpers that run the real command)

TOOLS = '''
from pathlib import Path
from crew import tool

LOG = Path(__file__).parent / "ran.log"

@tool
def write_config(text: str) -> str:
    """Write the deploy configuration."""
    with LOG.open("a") as fh:
        fh.write(text + "\\n")
    return "written"
'''

CREW = """
name: deploy
process: graph
llm: {{model: openai/gpt-4o-mini, api_base: "{url}", api_key: sk-test, num_retries: 0}}
tools:
  write_config: {{import: tools:write_config, requires_approval: true}}
agents:
  ops: {{role: Operator, goal: Deploy, tools: [write_config]}}
tasks:
{tasks}
"""

TOKEN = "tok-deploy-secret-0042"
KEY = "sk-proj-ABCDEFGHIJKLMNOPQRSTUV"
WAITING = re.compile(r"^  (\S+): write_config\((.*)\) by '.*' in task '(\w+)'", re.M)


def server_asking(text_of: dict[str, str]) -> OpenAIServer:
    """A model that, in the task whose description holds a key of ``text_of``, asks to write its text."""

    def answer(request: ChatRequest) -> Reply:
        if request.messages[-1]["role"] == "tool":
            return Reply.text("configured")
        task = next(name for name in text_of if f"Configure {name}" in json.dumps(request.messages))
        return Reply.tools({"name": "write_config", "args": {"text": text_of[task]}, "id": f"call_{task}"})

    return OpenAIServer(handler=answer)


def folder_for(tmp_path: Path, url: str, tasks: list[str]) -> Path:
    lines = "\n".join(f"  {t}: {{description: Configure {t}, expected_output: done, agent: ops}}" for t in tasks)
    return write(tmp_path / "deploy", {"crew.yaml": CREW.format(url=url, tasks=lines), "tools.py": TOOLS})


def crew_cmd(folder: Path, *args: str) -> object:
    environ = {**crew_env(), "DEPLOY_TOKEN": TOKEN, "OPENAI_API_KEY": KEY}
    return run_crew(*args, "--store", str(folder / "runs.db"), cwd=folder.parent, env=environ, timeout=90)


def pause(folder: Path) -> tuple[str, dict[str, str]]:
    done = crew_cmd(folder, "kickoff", str(folder))
    assert done.returncode == 3, done.stderr
    run = re.search(r"then continue: crew resume (\w+)", done.stderr)
    assert run is not None, done.stderr
    return run.group(1), {task: call_id for call_id, _, task in WAITING.findall(done.stderr)}


def stored_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.glob("runs.db*"))


def test_a_second_resume_of_a_paused_run_does_nothing_and_names_the_run_that_continued_it(tmp_path):
    with server_asking({"one": "config one"}) as server:
        folder = folder_for(tmp_path, server.url, ["one"])
        run, calls = pause(folder)
        assert crew_cmd(folder, "approve", run, calls["one"]).returncode == 0
        first = crew_cmd(folder, "resume", run)
        assert first.returncode == 0, first.stderr
        again = crew_cmd(folder, "resume", run)
    assert again.returncode == 2 and "Traceback" not in again.stderr
    (continuing,) = [r for r in json.loads(crew_cmd(folder, "runs", "--json").stdout) if r["continued_from"]]
    assert f"run {run} was continued already by run {continuing['id'][:12]} (done)" in again.stderr
    assert (folder / "ran.log").read_text() == "config one\n"  # the approved call ran once, not twice


def test_the_approved_call_runs_with_the_arguments_asked_while_the_store_keeps_no_secret(tmp_path):
    asked = f"config {TOKEN} and {KEY}"
    with server_asking({"one": asked}) as server:
        folder = folder_for(tmp_path, server.url, ["one"])
        run, calls = pause(folder)
        assert TOKEN.encode() not in stored_bytes(folder) and KEY.encode() not in stored_bytes(folder)
        assert crew_cmd(folder, "approve", run, calls["one"]).returncode == 0
        resumed = crew_cmd(folder, "resume", run)
    assert resumed.returncode == 0, resumed.stderr
    assert (folder / "ran.log").read_text() == asked + "\n"  # it ran `config *** and ***`
    assert TOKEN.encode() not in stored_bytes(folder) and KEY.encode() not in stored_bytes(folder)


def test_a_secret_the_resuming_process_does_not_know_is_refused_not_run_masked(tmp_path):
    stranger = "sk-ant-UNREGISTEREDKEY0123456789"
    with server_asking({"one": f"use {stranger}"}) as server:
        folder = folder_for(tmp_path, server.url, ["one"])
        run, calls = pause(folder)
        assert crew_cmd(folder, "approve", run, calls["one"]).returncode == 0
        refused = crew_cmd(folder, "resume", run)
        assert refused.returncode == 2 and "holds a secret this process does not know" in refused.stderr
        assert not (folder / "ran.log").exists()
        given = crew_cmd(folder, "approve", run, calls["one"], "--args", json.dumps({"text": f"use {TOKEN}"}))
        assert given.returncode == 0, given.stderr
        assert "replaces the earlier decision on call call_one (approved)" in given.stderr
        resumed = crew_cmd(folder, "resume", run)
    assert resumed.returncode == 0, resumed.stderr
    assert (folder / "ran.log").read_text() == f"use {TOKEN}\n"
    assert TOKEN.encode() not in stored_bytes(folder) and stranger.encode() not in stored_bytes(folder)


def test_approve_all_decides_every_waiting_call_and_show_lists_them_with_their_arguments(tmp_path):
    with server_asking({"alpha": "config alpha", "beta": "config beta"}) as server:
        folder = folder_for(tmp_path, server.url, ["alpha", "beta"])
        run, calls = pause(folder)
        shown = crew_cmd(folder, "show", run)
        assert shown.returncode == 0, shown.stderr
        assert "error:" not in shown.stdout
        assert f"waiting for approval (2 calls; `crew approve {run} CALL_ID`):" in shown.stdout
        listed = f"  {calls['alpha']}: write_config({{\"text\": \"config alpha\"}}) by 'Operator' in task 'alpha'"
        assert listed in shown.stdout
        denied = crew_cmd(folder, "approve", run, "--all", "--deny", f"not with {TOKEN}")
        assert denied.returncode == 0, denied.stderr
        assert denied.stderr.count(" denied") == 2 and f"continue it with: crew resume {run}" in denied.stderr
        assert TOKEN.encode() not in stored_bytes(folder)  # the reason is scrubbed like everything written
        assert "not with ***" in crew_cmd(folder, "show", run).stdout
        nothing = crew_cmd(folder, "approve", run, "--all")
        assert nothing.returncode == 2 and "no undecided call" in nothing.stderr
        again = crew_cmd(folder, "approve", run, calls["beta"])
        assert "replaces the earlier decision on call call_beta (denied)" in again.stderr
        resumed = crew_cmd(folder, "resume", run)
    assert resumed.returncode == 0, resumed.stderr
    assert (folder / "ran.log").read_text() == "config beta\n"


def test_edited_arguments_are_stored_sealed_and_run_as_given(tmp_path):
    with server_asking({"one": "config one"}) as server:
        folder = folder_for(tmp_path, server.url, ["one"])
        run, calls = pause(folder)
        edited = crew_cmd(folder, "approve", run, calls["one"], "--args", json.dumps({"text": f"key {TOKEN}"}))
        assert edited.returncode == 0, edited.stderr
        assert TOKEN.encode() not in stored_bytes(folder)
        assert 'approved with new arguments {"text": "key ***"}' in crew_cmd(folder, "show", run).stdout
        resumed = crew_cmd(folder, "resume", run)
    assert resumed.returncode == 0, resumed.stderr
    assert (folder / "ran.log").read_text() == f"key {TOKEN}\n"
