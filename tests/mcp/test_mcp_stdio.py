"""Real stdio servers: mcp-server-time from PyPI (pinned in the dev extra) and a small SDK server.

Covers listing against the server's own tools/list, calls through the executor and an agent
run, each start-up failure (with the server's stderr, before any model call), a server
killed mid-run, and the process table after success, failure and cancellation.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is in the dev extra")

from mcp_kit import HERE, bare_listing, servers_running, wait_until

from crew import Agent, Crew, Task
from crew.errors import CrewRunError
from crew.mcp import MCPServer, MCPStartupError
from crew.testing import FunctionModel
from crew.tools import ToolExecutor

TIME = ("mcp-server-time", ["--local-timezone", "UTC"])


def time_server(**options: Any) -> MCPServer:
    return MCPServer.stdio(TIME[0], args=TIME[1], name="time", **options)


def running_pids(marker: str = "mcp-server-time") -> set[int]:
    return {pid for pid, _ in servers_running(marker)}


@pytest.fixture
def no_orphans() -> Any:
    """Call it at the end of a test: True once no server process started during the test is left."""
    before = running_pids()
    return lambda: wait_until(lambda: not (running_pids() - before), 10)


@pytest.fixture(scope="module")
def time_open() -> Any:
    server = time_server()
    before = running_pids()
    with server:
        yield server
    assert wait_until(lambda: running_pids() <= before - {0}, 10)


def test_listing_matches_the_real_servers_tools_list(time_open) -> None:
    from mcp import StdioServerParameters

    own = bare_listing(StdioServerParameters(command=TIME[0], args=TIME[1]))
    tools = time_open.list_tools()
    assert [t.name for t in tools] == [t["name"] for t in own] == ["get_current_time", "convert_time"]
    for crew_tool, listed in zip(tools, own, strict=True):
        assert crew_tool.description == listed["description"]
        assert crew_tool.to_openai_tool()["function"]["parameters"] == listed["inputSchema"]
        assert crew_tool.annotations == listed["annotations"]
    assert tools[0].annotations["readOnlyHint"] is True


def test_calls_through_the_executor_from_sync_and_async_code(time_open) -> None:
    executor = ToolExecutor(time_open.list_tools())
    now = executor.execute({"name": "get_current_time", "args": {"timezone": "UTC"}})
    assert now.status == "success" and '"timezone": "UTC"' in now.content
    assert now.artifact["structured"]["timezone"] == "UTC"
    converted = asyncio.run(
        executor.aexecute(
            {
                "name": "convert_time",
                "args": {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
            }
        )
    )
    assert converted.status == "success" and "Asia/Tokyo" in converted.content
    bad = executor.execute({"name": "get_current_time", "args": {"timezone": "Mars/Olympus"}})
    assert bad.status == "error" and "MCP server 'time' reported an error" in bad.content


def ask_time(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    if messages[-1]["role"] != "tool":
        return [{"name": "get_current_time", "args": {"timezone": "UTC"}}]
    return f"it is {messages[-1]['content']}"


def clock_crew(llm: FunctionModel, server: MCPServer, *tasks: str) -> Crew:
    agent = Agent(role="clock", goal="Tell the time", llm=llm, mcp=[server])
    return Crew(
        agents=[agent], tasks=[Task(description=d, expected_output="a time", agent=agent) for d in tasks or ["now"]]
    )


def test_an_agent_run_uses_the_real_server_and_leaves_no_process(no_orphans) -> None:
    server = time_server()
    output = clock_crew(FunctionModel(ask_time), server, "now", "again").kickoff()
    assert [t.status for t in output.tasks_output] == ["done", "done"]
    assert '"timezone": "UTC"' in output.raw
    assert output.tool_stats["get_current_time"].runs == 1 and output.tool_stats["get_current_time"].cache_hits == 1
    assert not server.is_open and no_orphans()


def test_no_process_outlives_a_failed_run(no_orphans) -> None:
    def broken(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        if messages[-1]["role"] != "tool":
            return [{"name": "get_current_time", "args": {"timezone": "UTC"}}]
        raise RuntimeError("the model fell over")

    with pytest.raises(CrewRunError, match="the model fell over"):
        clock_crew(FunctionModel(broken), time_server()).kickoff()
    assert no_orphans()


def test_no_process_outlives_a_cancelled_run(no_orphans) -> None:
    started = asyncio.Event()

    async def stalls(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        started.set()
        await asyncio.sleep(60)

    async def main() -> None:
        run = asyncio.ensure_future(clock_crew(FunctionModel(stalls), time_server()).kickoff_async())
        await asyncio.wait_for(started.wait(), 20)
        assert wait_until(lambda: len(running_pids()) > 0, 1)  # open while the run is
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(main())
    assert no_orphans()


def test_start_up_failures_name_the_command_show_stderr_and_come_before_any_model_call() -> None:
    llm = FunctionModel(ask_time)
    missing = MCPServer.stdio("no-such-mcp-server", name="ghost")
    with pytest.raises(MCPStartupError, match=r"MCP server 'ghost' \(command: no-such-mcp-server\).*not found on PATH"):
        clock_crew(llm, missing).kickoff()
    exits = MCPServer.stdio(
        sys.executable, args=["-c", "import sys; sys.stderr.write('bad config: no key\\n'); sys.exit(3)"]
    )
    with pytest.raises(MCPStartupError, match=r"exited during start-up") as info:
        clock_crew(llm, exits).kickoff()
    assert "Its stderr:\n  bad config: no key" in str(info.value) and info.value.stderr == "bad config: no key"
    silent = MCPServer.stdio(
        sys.executable,
        args=["-c", "import sys, time; print('warming up', file=sys.stderr, flush=True); time.sleep(60)"],
        timeout=0.5,
    )
    with pytest.raises(MCPStartupError, match=r"did not complete the MCP handshake within 0.5 s") as info:
        clock_crew(llm, silent).kickoff()
    assert "warming up" in str(info.value)
    assert llm.calls == 0
    assert wait_until(lambda: not servers_running("warming up"), 10)


def test_a_server_killed_mid_run_gives_error_observations_and_the_crew_goes_on() -> None:
    server = MCPServer.stdio(sys.executable, args=[str(HERE / "env_server.py")], name="envsrv")
    seen: list[str] = []

    def kill_then_call(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        last = messages[-1]
        if last["role"] == "tool":
            seen.append(last["content"])
            return "carried on"
        if "first" in messages[1]["content"]:
            pid, _ = servers_running("env_server.py")[0]
            os.kill(pid, signal.SIGKILL)
            wait_until(lambda: not servers_running("env_server.py"), 5)
        return [{"name": "getenv", "args": {"name": "HOME"}}]

    llm = FunctionModel(kill_then_call)
    agent = Agent(role="reader", goal="Read", llm=llm, mcp=[server])
    tasks = [Task(description=f"{n} read", expected_output="a value", agent=agent) for n in ("first", "second")]
    output = Crew(agents=[agent], tasks=tasks).kickoff()
    assert [t.status for t in output.tasks_output] == ["done", "done"]
    assert all("MCP server 'envsrv'" in text for text in seen) and len(seen) == 2
    assert not server.is_open


def test_env_is_added_to_the_inherited_environment(monkeypatch) -> None:
    monkeypatch.setenv("CREW_TEST_INHERITED", "kept")
    server = MCPServer.stdio(sys.executable, args=[str(HERE / "env_server.py")], env={"CREW_TEST_ADDED": "added"})
    with server:
        executor = ToolExecutor(server.list_tools(), cache=False)
        read = {
            n: executor.execute({"name": "getenv", "args": {"name": n}}).content
            for n in ("CREW_TEST_ADDED", "CREW_TEST_INHERITED", "PATH")
        }
    assert read["CREW_TEST_ADDED"] == "added" and read["CREW_TEST_INHERITED"] == "kept"
    assert read["PATH"] == os.environ["PATH"]
