"""MCP tools against the SDK's own server, in process: listing, schema passthrough, validation,
result mapping, the executor's cache and limits, agent runs, clashes, opening rules."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is in the dev extra")

from mcp_kit import PNG, bare_listing, demo_server

from crew import Agent, Crew, Task
from crew.errors import ConfigError, CrewError
from crew.mcp import MCPServer, MCPTool
from crew.testing import FunctionModel
from crew.tools import ToolExecutor, never_cache, tool

Calls = list[tuple[str, dict[str, Any]]]


@pytest.fixture(scope="module")
def served() -> Any:
    """One open in-process server for the module: (crew server, the calls the SDK tools saw)."""
    calls: Calls = []
    sdk = demo_server(calls=calls)
    server = MCPServer.in_process(sdk)
    with server:
        yield server, calls, sdk


def test_listing_matches_the_servers_own_tools_list(served) -> None:
    server, _, sdk = served
    own = {t["name"]: t for t in bare_listing(sdk)}
    tools = server.list_tools()
    assert [t.name for t in tools] == list(own)
    for crew_tool in tools:
        listed = own[crew_tool.name]
        function = crew_tool.to_openai_tool()["function"]
        assert function["description"] == listed["description"]
        assert function["parameters"] == listed["inputSchema"]  # passed through, not re-derived
        assert crew_tool.input_schema == listed["inputSchema"]
        assert crew_tool.annotations == listed.get("annotations", {})
    add = next(t for t in tools if t.name == "add")
    assert add.annotations == {"readOnlyHint": True, "idempotentHint": True}
    assert asyncio.run(server.alist_tools())[0].name == "add"


def test_calls_through_the_executor_map_text_structured_images_and_errors(served) -> None:
    server, _calls, _ = served
    executor = ToolExecutor(server.list_tools())
    added = executor.execute({"name": "add", "args": {"a": 1}})
    assert (added.status, added.content, added.artifact) == ("success", "3", {"structured": {"result": 3}})
    failed = executor.execute({"name": "explode", "args": {"reason": "why"}})
    assert failed.status == "error" and "MCP server 'demo' reported an error" in failed.content
    image = executor.execute({"name": "picture", "args": {"size": 2}})
    assert image.status == "success" and "[image 1: image/png" in image.content and PNG not in image.content
    assert image.artifact["images"][0] == {"type": "image", "mime_type": "image/png", "data": PNG}


def test_arguments_are_validated_against_the_schema_before_the_server_is_called(served) -> None:
    server, calls, _ = served
    before = len(calls)
    executor = ToolExecutor(server.list_tools())
    wrong = executor.execute({"name": "add", "args": {"a": "one", "b": 2}})
    missing = executor.execute({"name": "search", "args": {"limit": 3}})
    assert wrong.status == missing.status == "error"
    assert "a: 'one' is not of type 'integer'" in wrong.content and "Expected arguments: a (integer, required)" in (
        wrong.content
    )
    assert "'query' is a required property" in missing.content
    assert len(calls) == before  # the server never saw them


def test_arguments_left_out_stay_out_of_the_call(served) -> None:
    server, calls, _ = served
    executor = ToolExecutor(server.list_tools(), cache=False)

    async def call() -> Any:
        return await executor.aexecute({"name": "search", "args": {"query": "q"}})

    result = asyncio.run(call())
    assert result.status == "success" and result.content == "results for q"
    assert calls[-1] == ("search", {"query": "q", "limit": None, "tags": None})  # the server's own defaults
    (search,) = [t for t in server.list_tools() if t.name == "search"]
    assert search.validate_args({"query": "q"}) == {"query": "q"}  # nothing added, no nulls


def test_cache_and_usage_limits_apply_as_to_every_tool(served) -> None:
    server, calls, _ = served
    add = next(t for t in server.list_tools() if t.name == "add")
    executor = ToolExecutor([add])
    before = len(calls)
    first = executor.execute({"name": "add", "args": {"a": 10}})
    again = executor.execute({"name": "add", "args": {"a": 10}})
    assert not first.cached and again.cached and len(calls) == before + 1

    limited = add.model_copy(update={"max_usage_count": 1, "cache_function": never_cache})
    executor = ToolExecutor([limited])
    results = [executor.execute({"name": "add", "args": {"a": n}}) for n in (1, 1)]
    assert [r.status for r in results] == ["success", "error"] and results[1].refused


def test_server_cache_function_and_prefix_and_filter_shape_the_tools() -> None:
    calls: Calls = []
    server = MCPServer.in_process(demo_server(calls=calls), prefix="d", tool_filter=["add"], cache_function=never_cache)
    with server:
        (add,) = server.list_tools()
        assert (add.name, add.remote_name, add.tool_name) == ("d_add", "add", "d_add")
        executor = ToolExecutor([add])
        for _ in range(2):
            assert executor.execute({"name": "d_add", "args": {"a": 1}}).content == "3"
        assert len(calls) == 2  # never cached
    assert not server.is_open


def test_an_unknown_filter_name_is_a_start_up_error_with_a_suggestion() -> None:
    server = MCPServer.in_process(demo_server(), tool_filter=["ad"])
    with pytest.raises(CrewError, match=r"tool_filter names 'ad'.*did you mean 'add'"):
        server.open()
    assert not server.is_open


def scripted(call: dict[str, Any]) -> FunctionModel:
    def reply(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        if messages[-1]["role"] != "tool":
            return [call]
        return f"tool said: {messages[-1]['content']}"

    return FunctionModel(reply)


def test_an_agent_run_opens_its_server_for_the_run_and_closes_it() -> None:
    server = MCPServer.in_process(demo_server())
    agent = Agent(role="adder", goal="Add", llm=scripted({"name": "add", "args": {"a": 4, "b": 5}}), mcp=[server])
    output = Crew(
        agents=[agent], tasks=[Task(description="Add 4 and 5", expected_output="a sum", agent=agent)]
    ).kickoff()
    assert output.raw == "tool said: 9" and output.tool_stats["add"].runs == 1
    assert not server.is_open


def test_a_server_in_tools_works_and_a_caller_opened_server_stays_open() -> None:
    server = MCPServer.in_process(demo_server())

    @tool
    def shout(text: str) -> str:
        """Shout."""
        return text.upper()

    agent = Agent(role="adder", goal="Add", llm=scripted({"name": "add", "args": {"a": 1}}), tools=[shout, server])
    assert agent.mcp == [server] and [t.name for t in agent.tools] == ["shout"]
    crew = Crew(agents=[agent], tasks=[Task(description="Add", expected_output="a sum", agent=agent)])
    with server:
        assert crew.kickoff().raw == "tool said: 3"
        assert server.is_open  # the caller's open outlives the run
    assert not server.is_open


def test_agent_execute_task_outside_a_run_opens_its_servers_too() -> None:
    server = MCPServer.in_process(demo_server())
    agent = Agent(role="adder", goal="Add", llm=scripted({"name": "add", "args": {"a": 2}}), mcp=[server])
    output = agent.execute_task(Task(description="Add", expected_output="a sum"))
    assert output.raw == "tool said: 4" and not server.is_open


def test_two_servers_offering_one_name_to_an_agent_is_a_clear_error() -> None:
    first, second = MCPServer.in_process(demo_server("one")), MCPServer.in_process(demo_server("two"))
    llm = scripted({"name": "add", "args": {"a": 1}})
    agent = Agent(role="adder", goal="Add", llm=llm, mcp=[first, second])
    crew = Crew(agents=[agent], tasks=[Task(description="Add", expected_output="a sum", agent=agent)])
    with pytest.raises(ConfigError, match=r"tool named 'add' from MCP server 'two' and from MCP server 'one'.*prefix"):
        crew.kickoff()
    assert llm.calls == 0 and not first.is_open and not second.is_open  # before any model call, all closed

    second.prefix = "two"
    assert crew.kickoff().raw == "tool said: 3"


def test_mcp_tools_are_crew_tools_with_the_servers_name_in_metadata(served) -> None:
    server, _, _ = served
    tools = server.list_tools()
    assert all(isinstance(t, MCPTool) and t.metadata == {"mcp_server": "demo"} for t in tools)
    assert "Tool Arguments:" in tools[0].describe() and tools[0].args_hint().startswith("a (integer, required)")


def test_a_closed_server_names_itself_in_the_observation() -> None:
    server = MCPServer.in_process(demo_server("gone"))
    with server:
        tools = server.list_tools()
    result = ToolExecutor(tools).execute({"name": "add", "args": {"a": 1}})
    assert result.status == "error" and "MCP server 'gone' is not open" in result.content
    with pytest.raises(CrewError, match="MCP server 'gone' is not open"):
        server.list_tools()


def test_bad_server_definitions_are_refused() -> None:
    with pytest.raises(CrewError, match="needs a command"):
        MCPServer.stdio("")
    with pytest.raises(CrewError, match="needs a url"):
        MCPServer.http("")
    with pytest.raises(CrewError, match="positive number"):
        MCPServer.stdio("x", timeout=0)
    with pytest.raises(CrewError, match="list of tool names"):
        MCPServer.stdio("x", tool_filter="add")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="mcp takes MCPServer objects"):
        Agent(role="r", goal="g", mcp=["time"])


def test_using_mcp_without_the_sdk_says_how_to_install_it() -> None:
    code = """
import sys
sys.modules["mcp"] = None  # as if the extra were not installed
import crew, crew.mcp
from crew.mcp import MCPServer
try:
    MCPServer.stdio("mcp-server-time").open()
except Exception as exc:
    print(type(exc).__name__, exc)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert 'pip install "crew-agents[mcp]"' in out.stdout and "CrewError" in out.stdout


def test_importing_crew_mcp_does_not_import_the_sdk() -> None:
    code = "import sys, crew, crew.mcp; from crew.mcp import MCPServer; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"


def test_concurrent_runs_share_one_connection_and_the_last_one_closes_it() -> None:
    opened: list[int] = []
    server = MCPServer.in_process(demo_server())
    original = server._own

    async def counting_own(conn: Any) -> None:
        opened.append(1)
        await original(conn)

    server._own = counting_own  # type: ignore[method-assign]
    agent = Agent(role="adder", goal="Add", llm=scripted({"name": "add", "args": {"a": 1}}), mcp=[server])
    crew = Crew(agents=[agent], tasks=[Task(description="Add {n}", expected_output="a sum", agent=agent)])
    outputs = crew.kickoff_for_each([{"n": i} for i in range(4)], concurrency=4)
    assert [o.raw for o in outputs] == ["tool said: 3"] * 4
    assert len(opened) == 1 and not server.is_open


def _counting(server: MCPServer) -> list[int]:
    """How many connections the server starts (one per owner task)."""
    opened: list[int] = []
    original = server._own

    async def counting_own(conn: Any) -> None:
        opened.append(1)
        await original(conn)

    server._own = counting_own  # type: ignore[method-assign]
    return opened


def _two_runs_in_threads(server: MCPServer) -> dict[str, str]:
    """Run A opens the server first and ends first; run B, on a loop of its own in another thread,
    opens it while A runs and calls its tool only after A's loop has ended."""
    b_opened, a_done = threading.Event(), threading.Event()

    def model(before: Any = None, wait_for: threading.Event | None = None) -> FunctionModel:
        def reply(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
            if messages[-1]["role"] == "tool":
                return f"tool said: {messages[-1]['content']}"
            if before is not None:
                before()
            if wait_for is not None:
                assert wait_for.wait(30)
            return [{"name": "add", "args": {"a": 1}}]

        return FunctionModel(reply)

    def kickoff(llm: FunctionModel) -> str:
        agent = Agent(role="adder", goal="Add", llm=llm, mcp=[server])
        return Crew(agents=[agent], tasks=[Task(description="Add", expected_output="a sum", agent=agent)]).kickoff().raw

    outputs: dict[str, str] = {}

    def run_a() -> None:
        outputs["a"] = kickoff(model(wait_for=b_opened))
        a_done.set()

    def run_b() -> None:
        outputs["b"] = kickoff(model(before=b_opened.set, wait_for=a_done))

    first = threading.Thread(target=run_a)
    first.start()
    time.sleep(0.3)  # A's kickoff has opened the server (its model waits for B)
    second = threading.Thread(target=run_b)
    second.start()
    first.join(60)
    second.join(60)
    return outputs


def test_a_run_on_another_loop_keeps_its_server_when_the_first_run_ends() -> None:
    server = MCPServer.in_process(demo_server())
    opened = _counting(server)
    outputs = _two_runs_in_threads(server)
    assert outputs == {"a": "tool said: 3", "b": "tool said: 3"}  # B's call came after A's loop had closed
    assert len(opened) == 2 and not server.is_open  # a connection per loop, both closed


def test_a_server_opened_in_sync_code_is_shared_by_runs_on_every_loop() -> None:
    server = MCPServer.in_process(demo_server())
    opened = _counting(server)
    with server:
        outputs = _two_runs_in_threads(server)
        assert server.is_open
    assert outputs == {"a": "tool said: 3", "b": "tool said: 3"}
    assert len(opened) == 1 and not server.is_open


def test_a_missing_input_is_reported_before_any_server_starts() -> None:
    from crew.errors import MissingInputError

    server = MCPServer.stdio("no-such-mcp-server")  # would fail to start: it is never tried
    agent = Agent(role="adder of {what}", goal="Add", llm=scripted({"name": "add", "args": {"a": 1}}), mcp=[server])
    crew = Crew(agents=[agent], tasks=[Task(description="Add", expected_output="a sum", agent=agent)])
    with pytest.raises(MissingInputError, match="what"):
        crew.kickoff()


def test_copies_of_an_agent_or_a_tool_share_the_server() -> None:
    import copy

    server = MCPServer.in_process(demo_server())
    agent = Agent(role="adder", goal="Add", mcp=[server])
    assert copy.deepcopy(agent).mcp[0] is server and agent.model_copy(deep=True).mcp[0] is server
    with server:
        tool_copy = copy.deepcopy(server.list_tools()[0])
        assert (
            tool_copy.server is server
            and ToolExecutor([tool_copy]).execute({"name": "add", "args": {"a": 1}}).content == "3"
        )


def _city_server(tag: str) -> Any:
    from mcp.server.mcpserver import MCPServer as SDK

    sdk = SDK(f"cities-{tag}")

    @sdk.tool()
    def lookup(city: str) -> str:
        """Look a city up."""
        return f"server {tag} says {city}"

    return sdk


def test_two_servers_tools_of_one_name_are_cached_apart() -> None:
    """Agent B was served agent A's cached `lookup`: an agent's MCP tools reach the executor
    only with its calls (``tools=``), and were kept under the bare name."""

    def reply(messages, tools):
        return (
            messages[-1]["content"]
            if messages[-1]["role"] == "tool"
            else [{"name": "lookup", "args": {"city": "Oslo"}}]
        )

    a = Agent(role="A", goal="g", llm=FunctionModel(reply), mcp=[MCPServer.in_process(_city_server("A"), name="sa")])
    b = Agent(role="B", goal="g", llm=FunctionModel(reply), mcp=[MCPServer.in_process(_city_server("B"), name="sb")])
    tasks = [Task(name="a", description="x", agent=a), Task(name="b", description="x", agent=b)]
    out = Crew(agents=[a, b], tasks=tasks).kickoff()
    assert [o.raw for o in out.tasks_output] == ["server A says Oslo", "server B says Oslo"]
    assert sorted(out.tool_stats) == ["lookup", "lookup#2"]
