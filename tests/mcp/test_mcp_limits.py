"""Bounds on what an MCP server can do to a run: a call that never answers, a huge result,
and a stdio server left running when crew is killed."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is in the dev extra")

from mcp_kit import HERE, wait_until

from crew.mcp import MCPServer
from crew.mcp.tool import MAX_RESULT_CHARS
from crew.tools import ToolExecutor


def stuck_server() -> Any:
    from mcp.server.mcpserver import MCPServer as SDKServer

    sdk = SDKServer("stuck")

    @sdk.tool()
    async def wait() -> str:
        """Never answers."""
        await asyncio.sleep(3600)
        return "never"

    @sdk.tool()
    def flood(size: int) -> str:
        """A result far past any sensible size."""
        return "x" * size

    return sdk


def test_a_call_that_never_answers_becomes_an_error_naming_server_tool_and_limit() -> None:
    server = MCPServer.in_process(stuck_server(), call_timeout=0.5)
    with server:
        executor = ToolExecutor(server.list_tools())
        started = time.monotonic()
        result = executor.execute({"name": "wait", "args": {}})
    assert time.monotonic() - started < 10
    assert result.status == "error"
    assert "MCP server 'stuck' did not answer tool 'wait' within 0.5 s" in result.content


def test_a_huge_result_is_cut_with_a_note() -> None:
    server = MCPServer.in_process(stuck_server())
    with server:
        result = ToolExecutor(server.list_tools()).execute({"name": "flood", "args": {"size": MAX_RESULT_CHARS + 5000}})
    assert result.status == "success"
    assert len(result.content) < MAX_RESULT_CHARS + 200
    assert result.content.endswith(f"[result cut: 5000 more characters left out, past the {MAX_RESULT_CHARS} limit]")


def test_call_timeout_must_be_positive() -> None:
    from crew.errors import CrewError

    with pytest.raises(CrewError, match="call_timeout must be a positive number of seconds, got 0"):
        MCPServer.in_process(stuck_server(), call_timeout=0)


KICKOFF = textwrap.dedent(
    """
    import sys, time
    from crew import Agent, Crew, Task
    from crew.mcp import MCPServer
    from crew.testing import FunctionModel

    def model(messages, tools):
        if messages[-1]["role"] != "tool":
            return [{"name": "pid", "args": {}}]
        print(messages[-1]["content"], flush=True)  # the server's pid
        return [{"name": "busy", "args": {"seconds": 120}}]  # crew is killed during this call

    server = MCPServer.stdio(sys.executable, args=[sys.argv[1]], name="env")
    agent = Agent(role="R", goal="g", llm=FunctionModel(model), mcp=[server])
    Crew(agents=[agent], tasks=[Task(description="d", expected_output="x", agent=agent)]).kickoff()
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_stdio_server_dies_when_its_crew_is_killed() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    crew = subprocess.Popen(
        [sys.executable, "-c", KICKOFF, str(HERE / "env_server.py")], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert crew.stdout is not None
        pid = int(crew.stdout.readline().strip())
        time.sleep(1)  # the busy call has reached the server
        assert _alive(pid)
    finally:
        crew.send_signal(signal.SIGKILL)
        crew.wait(10)
    try:
        assert wait_until(lambda: not _alive(pid), 10)
    finally:
        if _alive(pid):  # the failure case: do not leave it behind
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False
