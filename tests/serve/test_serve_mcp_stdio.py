"""``crew serve --mcp`` over stdio, driven by the MCP SDK's own client: one real server process for the module."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is in the dev extra")

from serve_kit import CREWS, Held, env

from crew.cli import main
from crew.store import RunStore


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("serve-stdio") / "runs.db"


@pytest.fixture(scope="module")
def client(store: Path) -> Any:
    from mcp import Client, StdioServerParameters

    folders = [str(CREWS / name) for name in ("brief", "gate", "slow")]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "crew", "serve", "--mcp", *folders, "--live-tools", "--store", str(store)],
        env=env(),
    )
    held = Held(lambda: Client(params))
    yield held
    with contextlib.suppress(Exception):  # the last test stopped the server under it
        held.close()


def test_each_crew_folder_is_a_tool_with_its_schemas(client: Held) -> None:
    tools = {tool.name: tool for tool in client.run(lambda c: c.list_tools()).tools}
    assert sorted(tools) == ["brief", "gate", "slow"]
    brief = tools["brief"]
    assert brief.description == "Writes a short brief about a topic."
    schema = brief.input_schema
    assert schema["properties"]["topic"] == {
        "type": "string",
        "default": "tide pools",
        "description": "fills {topic} in the crew's tasks and agents",
    }
    assert schema["properties"]["words"]["type"] == "integer"  # typed by its default
    assert schema["properties"]["audience"]["type"] == "string" and schema["required"] == ["audience"]
    assert schema["additionalProperties"] is False
    assert brief.output_schema is not None and set(brief.output_schema["properties"]) == {"title", "summary"}
    assert tools["gate"].output_schema is None  # a text output has no schema
    assert "Remove {path}." in (tools["gate"].description or "")  # no description: its tasks' summary


def test_a_call_runs_a_recorded_kickoff_with_progress_and_structured_output(client: Held, store: Path) -> None:
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(f"{done:g}/{total:g} {message}")

    result = client.run(lambda c: c.call_tool("brief", {"audience": "kids"}, progress_callback=on_progress))
    assert not result.is_error, result.content
    assert set(result.structured_content) == {"title", "summary"}
    run_id = result.meta["run_id"]
    assert result.meta["status"] == "done"
    assert progress[0] == "0/2 task.started notes (Writer)" and progress[-1] == "2/2 task.finished brief"
    stored = RunStore(store).run(run_id)
    assert stored.status == "done" and stored.inputs["audience"] == "kids" and stored.inputs["topic"] == "tide pools"


def test_bad_inputs_are_a_clear_error_result_and_the_server_goes_on(client: Held) -> None:
    result = client.run(lambda c: c.call_tool("brief", {"words": "many", "colour": "red"}))
    assert result.is_error
    text = result.content[0].text
    assert text == (
        "crew 'brief': input 'words': expected an integer, got string; input 'colour': not an input of this "
        "crew (its inputs: audience, topic, words); input 'audience': missing (it has no default)"
    )
    assert "Traceback" not in text
    assert client.run(lambda c: c.call_tool("brief", {"audience": "cats"})).meta["status"] == "done"


def test_a_pause_without_elicitation_says_how_to_approve_and_the_commands_work(client: Held, store: Path) -> None:
    # The SDK client's default connection has no way back to the client: the run pauses.
    result = client.run(lambda c: c.call_tool("gate", {"path": "/tmp/x.log"}))
    assert result.is_error and result.meta["status"] == "paused"
    run = result.meta["run_id"]
    text = result.content[0].text
    assert f"The run {run[:12]} of crew 'gate' is paused" in text
    assert 'remove({"path": "/tmp/x.log"})' in text
    call_id = _waiting_call(store, run)
    assert f"crew approve {run[:12]} {call_id} --path {CREWS / 'gate'}" in text
    assert main(["approve", run[:12], call_id, "--store", str(store), "--path", str(CREWS / "gate")]) == 0
    assert main(["resume", run[:12], "--store", str(store), "--path", str(CREWS / "gate"), "-q"]) == 0


def _waiting_call(store: Path, run: str) -> str:
    from crew.store.approvals import pending

    rows = pending(RunStore(store), run)
    assert len(rows) == 1
    return rows[0]["call_id"]


def test_cancelling_the_request_cancels_the_run_and_marks_it_interrupted(client: Held, store: Path) -> None:
    started = asyncio.Event()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        if message == "task.started wait (Waiter)":
            started.set()

    async def cancelled_call(c: Any) -> str:
        call = asyncio.ensure_future(c.call_tool("slow", {}, progress_callback=on_progress))
        await asyncio.wait_for(started.wait(), 30)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        return "cancelled"

    before = {run.id for run in RunStore(store).runs()}
    assert client.run(cancelled_call) == "cancelled"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        new = [run for run in RunStore(store).runs() if run.id not in before]
        if new and new[0].status == "interrupted":
            break
        time.sleep(0.05)
    assert [run.status for run in new] == ["interrupted"]
    assert new[0].crew == "slow"


def test_sigterm_interrupts_running_kickoffs_and_the_server_exits(client: Held, store: Path) -> None:
    """Last in the module: it stops the module's server."""
    import signal

    started = asyncio.Event()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        if message == "task.started wait (Waiter)":
            started.set()

    before = {run.id for run in RunStore(store).runs()}
    call = client.submit(client.client.call_tool("slow", {}, progress_callback=on_progress))
    client.run(lambda c: asyncio.wait_for(started.wait(), 30))
    (pid,) = [pid for pid, command in children() if command.startswith("crew serve")]
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(p == pid for p, _ in children()):
        time.sleep(0.05)
    assert not any(p == pid for p, _ in children()), "the server did not exit"
    with pytest.raises(Exception):  # noqa: B017 - the connection closed under the call, whatever the SDK calls it
        call.result(30)
    new = [run for run in RunStore(store).runs() if run.id not in before]
    assert [(run.crew, run.status) for run in new] == [("slow", "interrupted")]


def children() -> list[tuple[int, str]]:
    """(pid, command line) of this process's live children."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError):
            continue
        if stat[0] != "Z" and int(stat[1]) == os.getpid():
            out.append((int(entry), command.replace(sys.executable + " -m ", "")))
    return out
