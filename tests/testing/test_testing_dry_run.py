"""`crew kickoff --llm test`: the test model's tool calls are dry unless --live-tools, and the demos succeed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from crew.tools.messages import STAND_IN

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_kit import in_process  # noqa: E402  (tests/cli holds the in-process runner)

SERVER = Path(__file__).with_name("notes_server.py")
EXAMPLES = sorted(p for p in (REPO / "examples").iterdir() if (p / "crew.yaml").is_file())


def crew_command(*args: str, cwd: Path, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    """The `crew` command, its output piped (the progress view prints plain lines)."""
    env = {k: v for k, v in os.environ.items() if k not in ("CREW_LLM", "NO_COLOR", "TERM", "CREW_STORE")}
    env.update(PYTHONUNBUFFERED="1", PYTHONPATH=str(REPO))
    return in_process(*args, cwd=cwd, env=env)  # in this process, as a process would run it


@pytest.fixture
def touchy_crew(tmp_path: Path) -> tuple[Path, Path]:
    """A crew whose tools leave traces: a Python tool writes a file, an MCP server's tool appends to one."""
    pytest.importorskip("mcp")
    folder, traces = tmp_path / "touchy", tmp_path / "traces"
    folder.mkdir()
    traces.mkdir()
    (folder / "tools.py").write_text(
        textwrap.dedent(
            f'''
            from pathlib import Path
            from crew import tool

            @tool
            def save_report(text: str) -> str:
                """Save a report to disk."""
                Path({str(traces / "report.txt")!r}).write_text(text)
                return "saved"
            '''
        )
    )
    (folder / "crew.yaml").write_text(
        textwrap.dedent(
            f"""
            name: touchy
            llm: test
            tools:
              save_report: tools:save_report
            mcp_servers:
              notes:
                command: {json.dumps(sys.executable)}
                args: [{json.dumps(str(SERVER))}, {json.dumps(str(traces / "notes.log"))}]
            agents:
              clerk:
                role: Clerk
                goal: Keep records
                backstory: Careful.
                tools: [save_report]
                mcp: [notes]
            tasks:
              record:
                description: Record the day.
                expected_output: A confirmation.
                agent: clerk
            """
        )
    )
    return folder, traces


def _calls(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for t in document["tasks_output"] for c in t["tool_calls"]]


def _stored_calls(store: Path, cwd: Path) -> list[dict[str, Any]]:
    """The run store's record of the latest run's tool calls (``crew show --json``)."""
    shown = crew_command("show", "--store", str(store), "--json", cwd=cwd)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)["tool_calls"]


def test_the_test_models_calls_are_dry_by_default(touchy_crew: tuple[Path, Path], tmp_path: Path) -> None:
    folder, traces = touchy_crew
    store = tmp_path / "runs.db"
    done = crew_command("kickoff", str(folder), "--store", str(store), cwd=folder)
    assert done.returncode == 0, done.stderr
    assert list(traces.iterdir()) == []  # neither tool ran
    # the progress view says so, call by call
    assert "save_report (stand-in: not run)" in done.stderr and "add_note (stand-in: not run)" in done.stderr
    # and so does the run store's record of each call
    stored = _stored_calls(store, folder)
    assert sorted(c["tool"] for c in stored) == ["add_note", "save_report"]
    assert all(c["status"] == "success" and c["stand_in"] and c["result"].startswith(STAND_IN) for c in stored)
    assert "`crew kickoff --live-tools` runs it" in stored[0]["result"]
    shown = crew_command("show", "--store", str(store), cwd=folder)
    assert shown.stdout.count("(stand-in: not run)") == 2, shown.stdout


def test_live_tools_really_calls_them(touchy_crew: tuple[Path, Path], tmp_path: Path) -> None:
    folder, traces = touchy_crew
    store = tmp_path / "runs.db"
    done = crew_command("kickoff", str(folder), "--live-tools", "--store", str(store), cwd=folder)
    assert done.returncode == 0, done.stderr
    assert (traces / "report.txt").is_file()
    assert (traces / "notes.log").read_text().startswith("add_note ")
    assert "stand-in" not in done.stderr
    stored = _stored_calls(store, folder)
    assert sorted(c["result"] for c in stored) == ["added", "saved"] and not any(c["stand_in"] for c in stored)


def test_a_stand_in_is_built_from_the_tools_output_schema(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    store = tmp_path / "runs.db"
    done = crew_command("kickoff", str(REPO / "examples" / "world_clock"), "--store", str(store), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    current = next(c for c in _stored_calls(store, tmp_path) if c["tool"] == "get_current_time")
    value = json.loads(current["result"].removeprefix(STAND_IN))
    assert set(value) == {"timezone", "datetime", "day_of_week", "is_dst"}  # the server's TimeResult
    assert value["timezone"] == "Europe/Lisbon"  # the crew's input of that name


@pytest.mark.parametrize("live", [False, True], ids=["dry", "live-tools"])
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_example_kicks_off_offline_with_no_failed_tool_call(example: Path, live: bool, tmp_path: Path) -> None:
    """The shipped demos on the test model: every call succeeds, on stand-ins or (--live-tools) on the real tools.

    world_clock's calls then reach the real mcp-server-time, which refuses a made-up time zone.
    """
    if example.name == "world_clock":
        pytest.importorskip("mcp")
    store = tmp_path / "runs.db"
    flags = ["--live-tools"] if live else []
    done = crew_command(
        "kickoff",
        str(example),
        "--llm",
        "test",
        *flags,
        "--json",
        "--store",
        str(store),
        "--out",
        str(tmp_path),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "done"
    calls = [c for c in _stored_calls(store, tmp_path) if not c["tool"].startswith(("Delegate", "Ask"))]
    assert calls, "the test model calls every tool it is given"
    assert [(c["tool"], c["result"]) for c in calls if c["status"] != "success"] == []
    assert all(c["stand_in"] != live for c in calls)
    if example.name == "world_clock" and live:
        assert {c["tool"] for c in calls} == {"get_current_time", "convert_time"}
        assert all("Invalid timezone" not in c["result"] for c in calls)
