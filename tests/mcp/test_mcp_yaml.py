"""``mcp_servers:`` in crew.yaml: loading (errors with file:line:key), `crew kickoff --llm test --json`
with a real server, `crew tools`, `crew validate` (no start) and `crew validate --check-servers`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is in the dev extra")

from mcp_kit import HERE, servers_running, wait_until

from crew.config import load_project
from crew.errors import ConfigError

REPO = HERE.parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_kit import in_process  # noqa: E402  (tests/cli holds the in-process runner)

CREW = """
    llm: test
    mcp_servers:
      time: {command: mcp-server-time, args: [--local-timezone, UTC], timeout: 20}
    agents:
      clock: {role: Clock, goal: Tell the time, backstory: Knows clocks., mcp: [time]}
    tasks:
      now: {description: What time is it in UTC?, expected_output: the time, agent: clock}
    """


def folder(tmp_path: Path, text: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "crew.yaml").write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return tmp_path


def crew(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The ``crew`` command, in this process as a process would run it (cli_kit.in_process)."""
    environ = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})}
    return in_process(*args, cwd=REPO, env=environ)


def test_kickoff_json_runs_the_real_server_and_leaves_no_process(tmp_path: Path) -> None:
    before = {pid for pid, _ in servers_running()}
    done = crew("kickoff", str(folder(tmp_path, CREW)), "--llm", "test", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    calls = result["tasks_output"][0]["tool_calls"]
    assert {c["name"] for c in calls} == {"get_current_time", "convert_time"}  # the test model calls each tool
    assert result["tool_stats"]["get_current_time"]["runs"] == 1
    assert wait_until(lambda: not ({pid for pid, _ in servers_running()} - before), 5)


def test_crew_tools_lists_the_servers_tools(tmp_path: Path) -> None:
    done = crew("tools", str(folder(tmp_path, CREW)))
    assert done.returncode == 0, done.stderr
    assert "get_current_time (MCP server time)" in done.stdout and "timezone (string, required)" in done.stdout


def test_validate_checks_commands_without_starting_and_check_servers_starts_them(tmp_path: Path) -> None:
    ok = crew("validate", str(folder(tmp_path / "ok", CREW)))
    assert ok.returncode == 0 and "MCP servers: time (configuration checked; nothing started)" in ok.stdout
    missing = folder(tmp_path / "missing", CREW.replace("command: mcp-server-time", "command: mcp-server-tmie"))
    done = crew("validate", str(missing))
    assert done.returncode == 2
    assert "crew.yaml:3: mcp_servers.time.command: command 'mcp-server-tmie' was not found on PATH" in done.stderr
    script = tmp_path / "bad_server.py"
    script.write_text("import sys\nsys.stderr.write('cannot read config.toml\\n')\nsys.exit(4)\n")
    failing = CREW.replace(
        "{command: mcp-server-time, args: [--local-timezone, UTC], timeout: 20}",
        f"{{command: {sys.executable}, args: [{script}]}}",
    )
    folder_ = folder(tmp_path / "failing", failing)
    assert crew("validate", str(folder_)).returncode == 0  # nothing started
    checked = crew("validate", str(folder_), "--check-servers")
    assert checked.returncode == 1
    assert "MCP server 'time'" in checked.stderr and "cannot read config.toml" in checked.stderr
    assert "Traceback" not in checked.stderr


def test_yaml_errors_are_located_and_suggest_names(tmp_path: Path) -> None:
    text = """
        llm: test
        mcp_servers:
          time: {command: mcp-server-time, prefx: t}
          empty: {}
          docs: {url: "http://127.0.0.1:9/mcp", args: [x]}
          both: {command: mcp-server-time, url: "http://127.0.0.1:9/mcp"}
        agents:
          clock: {role: Clock, goal: Tell, backstory: B., mcp: [tiem]}
        tasks:
          now: {description: Now, expected_output: time, agent: clock}
        """
    with pytest.raises(ConfigError) as info:
        load_project(folder(tmp_path, text))
    errors = "\n".join(info.value.errors)
    assert "crew.yaml:3: mcp_servers.time.prefx: unknown key 'prefx' (did you mean 'prefix'?)" in errors
    assert "crew.yaml:4: mcp_servers.empty: an MCP server needs `command:`" in errors
    assert "crew.yaml:5: mcp_servers.docs.args: `args` applies to stdio servers only" in errors
    assert "crew.yaml:6: mcp_servers.both.url: give `command:` (stdio) or `url:` (HTTP), not both" in errors
    assert "crew.yaml:8: agents.clock.mcp[0]: unknown MCP server 'tiem' (did you mean 'time'?)" in errors


def test_environment_placeholders_fill_env_headers_and_url(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DOCS_TOKEN", "tok-123")
    monkeypatch.setenv("DOCS_PORT", "3001")
    monkeypatch.setenv("TIME_ZONE", "Europe/Oslo")
    text = """
        llm: test
        mcp_servers:
          time: {command: mcp-server-time, env: {TZ: "${TIME_ZONE}"}}
          docs:
            {url: "http://127.0.0.1:${DOCS_PORT}/mcp", headers: {Authorization: "Bearer ${DOCS_TOKEN}"}, transport: sse}
        agents:
          clock: {role: Clock, goal: Tell, backstory: B., mcp: [time, docs]}
        tasks:
          now: {description: Now, expected_output: time, agent: clock}
        """
    project = load_project(folder(tmp_path, text))
    time, docs = project.servers["time"], project.servers["docs"]
    assert time.env == {"TZ": "Europe/Oslo"} and time.transport == "stdio"
    assert (docs.transport, docs.url, docs.headers) == (
        "sse",
        "http://127.0.0.1:3001/mcp",
        {"Authorization": "Bearer tok-123"},
    )
    assert project.crew.agents[0].mcp == [time, docs]
    monkeypatch.delenv("DOCS_TOKEN")
    with pytest.raises(ConfigError, match=r"crew.yaml:5: .*environment variable DOCS_TOKEN is not set"):
        load_project(tmp_path)


def test_sigterm_during_a_kickoff_leaves_no_server_behind(tmp_path: Path) -> None:
    import signal
    import uuid

    from mcp_kit import anywhere

    marker = f"crew-sigterm-{uuid.uuid4().hex[:8]}"  # names this test's server process, wherever it ends up
    waiting = tmp_path / "waiting"
    (tmp_path / "tools.py").write_text(
        "import time\nfrom pathlib import Path\nfrom crew import tool\n\n@tool\ndef wait(reason: str) -> str:\n"
        f'    """Wait a long time."""\n    Path({str(waiting)!r}).touch()\n    time.sleep(60)\n    return reason\n'
    )
    text = f"""
        llm: test
        tools:
          wait: tools:wait
        mcp_servers:
          env: {{command: {sys.executable}, args: [{HERE / "env_server.py"}, {marker}], timeout: 20}}
        agents:
          waiter: {{role: Waiter, goal: Wait, backstory: Patient., mcp: [env], tools: [wait]}}
        tasks:
          idle: {{description: Wait for it, expected_output: nothing, agent: waiter}}
        """
    crew_folder = folder(tmp_path, text)
    process = subprocess.Popen(
        [sys.executable, "-m", "crew.cli", "kickoff", str(crew_folder), "--llm", "test", "--live-tools", "--json"],
        cwd=REPO,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: bool(anywhere(marker)), 30), "the server never started"
        # the model's turn: the tools are called (for real: --live-tools; a stand-in would not block), `wait` blocks
        assert wait_until(waiting.exists, 30), "the tool never started"
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 143, err
    assert wait_until(lambda: not anywhere(marker), 10), "the MCP server outlived the run"


def test_approve_destructive_is_a_server_key_and_must_be_a_bool(tmp_path: Path) -> None:
    text = """
        llm: test
        mcp_servers:
          time: {command: mcp-server-time, approve_destructive: true}
          other: {command: mcp-server-time}
        agents:
          clock: {role: Clock, goal: Tell, backstory: B., mcp: [time, other]}
        tasks:
          now: {description: Now, expected_output: time, agent: clock}
        """
    project = load_project(folder(tmp_path / "ok", text))
    assert project.servers["time"].approve_destructive is True
    assert project.servers["other"].approve_destructive is False
    with pytest.raises(ConfigError) as info:
        load_project(
            folder(tmp_path / "bad", text.replace("approve_destructive: true", "approve_destructive: yes please"))
        )
    assert "crew.yaml:3: mcp_servers.time.approve_destructive: expected true or false, got 'yes please'" in "\n".join(
        info.value.errors
    )


def test_call_timeout_is_a_server_key_and_must_be_a_positive_number(tmp_path: Path) -> None:
    text = """
        llm: test
        mcp_servers:
          time: {command: mcp-server-time, call_timeout: 2.5}
          other: {command: mcp-server-time}
        agents:
          clock: {role: Clock, goal: Tell, backstory: B., mcp: [time, other]}
        tasks:
          now: {description: Now, expected_output: time, agent: clock}
        """
    project = load_project(folder(tmp_path / "ok", text))
    assert project.servers["time"].call_timeout == 2.5
    assert project.servers["other"].call_timeout == 300  # the default, as in Python
    for i, wrong in enumerate(["0", "-1", "soon", "true"]):
        with pytest.raises(ConfigError) as info:
            load_project(folder(tmp_path / f"bad{i}", text.replace("call_timeout: 2.5", f"call_timeout: {wrong}")))
        errors = "\n".join(info.value.errors)
        assert "crew.yaml:3: mcp_servers.time.call_timeout: expected a positive number of seconds" in errors, errors
