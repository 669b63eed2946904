"""The HTTP transports against a local server started here on 127.0.0.1: the SDK's own server
app (streamable HTTP, and the older SSE) under uvicorn in a thread, started once per module."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is in the dev extra")
pytest.importorskip("uvicorn", reason="the SDK's server apps run under uvicorn (an mcp dependency)")

from mcp_kit import bare_listing, demo_server, free_port, require_token, serve

from crew import Agent, Crew, Task
from crew.mcp import MCPServer, MCPStartupError
from crew.testing import FunctionModel
from crew.tools import ToolExecutor

TOKEN = "s3cret-token"


@pytest.fixture(scope="module")
def http_url() -> Any:
    with serve(require_token(demo_server("web").streamable_http_app(), TOKEN)) as base:
        yield f"{base}/mcp"


@pytest.fixture(scope="module")
def sse_url() -> Any:
    with serve(demo_server("legacy").sse_app()) as base:
        yield f"{base}/sse"


def test_streamable_http_with_headers_lists_and_calls(http_url: str) -> None:
    server = MCPServer.http(http_url, headers={"Authorization": f"Bearer {TOKEN}"}, prefix="web")
    with server:
        tools = server.list_tools()
        assert [t.name for t in tools] == ["web_add", "web_search", "web_explode", "web_picture"]
        assert ToolExecutor(tools).execute({"name": "web_add", "args": {"a": 2, "b": 3}}).content == "5"
    assert not server.is_open


def test_a_refused_connection_names_the_url_without_credentials(http_url: str) -> None:
    server = MCPServer.http(http_url.replace("http://", "http://user:pw@"), timeout=5)
    with pytest.raises(MCPStartupError, match=rf"\(url: {http_url}\) failed during start-up") as info:
        server.open()
    assert "pw" not in str(info.value) and TOKEN not in str(info.value)


def test_nothing_listening_is_a_start_up_error() -> None:
    server = MCPServer.http(f"http://127.0.0.1:{free_port()}/mcp", timeout=5)
    with pytest.raises(MCPStartupError, match="failed during start-up"):
        server.open()


def test_sse_transport_lists_the_same_schemas_and_runs_in_a_crew(sse_url: str) -> None:
    from mcp.client.sse import sse_client

    own = {t["name"]: t["inputSchema"] for t in bare_listing(sse_client(sse_url))}
    server = MCPServer.sse(sse_url)

    def reply(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        if messages[-1]["role"] != "tool":
            assert {t["function"]["name"]: t["function"]["parameters"] for t in tools} == own
            return [{"name": "search", "args": {"query": "mcp"}}]
        return messages[-1]["content"]

    agent = Agent(role="finder", goal="Find", llm=FunctionModel(reply), mcp=[server])
    output = Crew(agents=[agent], tasks=[Task(description="Find", expected_output="results", agent=agent)]).kickoff()
    assert output.raw == "results for mcp" and not server.is_open
