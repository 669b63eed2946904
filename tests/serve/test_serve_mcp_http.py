"""``crew serve --mcp --http`` as a real process (one for the module), with a token: the SDK's client over
streamable HTTP, elicitation for approvals, the guard, and a crew whose tool is a crew served in that process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("mcp", reason="the mcp extra is in the dev extra")

from serve_kit import CREWS, Held, free_port, served_process

from crew.store import RunStore

TOKEN = "serve-token-0123456789"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    store = tmp_path_factory.mktemp("serve-http") / "runs.db"
    port = free_port()
    args = ["--mcp", str(CREWS / "brief"), str(CREWS / "gate"), "--http", f"127.0.0.1:{port}"]
    args += ["--token", TOKEN, "--live-tools", "--store", str(store)]
    with served_process(args, port) as process:
        yield {"url": f"http://127.0.0.1:{port}/mcp", "store": store, "process": process}


def _client(url: str, **options: Any) -> Any:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
    return Client(streamable_http_client(url, http_client=http), **options)


def test_every_request_needs_the_token(server: dict[str, Any]) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        response = httpx.post(server["url"], json={}, headers=headers)
        assert response.status_code == 401
        assert response.json() == {"error": "unauthorized: send the server's token as 'Authorization: Bearer TOKEN'"}
    too_big = httpx.post(server["url"], content=b"x" * (1024 * 1024 + 1), headers={"Authorization": f"Bearer {TOKEN}"})
    assert too_big.status_code == 413


def test_a_call_over_streamable_http_runs_the_crew(server: dict[str, Any]) -> None:
    held = Held(lambda: _client(server["url"]))
    try:
        names = [tool.name for tool in held.run(lambda c: c.list_tools()).tools]
        result = held.run(lambda c: c.call_tool("brief", {"audience": "divers", "words": 50}))
    finally:
        held.close()
    assert names == ["brief", "gate"]
    assert not result.is_error and set(result.structured_content) == {"title", "summary"}
    assert RunStore(server["store"]).run(result.meta["run_id"]).status == "done"
    assert TOKEN not in str(result.model_dump())


def test_an_approval_is_asked_through_elicitation(server: dict[str, Any]) -> None:
    from mcp_types import ElicitResult

    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"approve": True, "reason": ""})

    held = Held(lambda: _client(server["url"], elicitation_callback=elicit, mode="legacy"))
    try:
        result = held.run(lambda c: c.call_tool("gate", {"path": "/tmp/y.log"}))
    finally:
        held.close()
    assert asked == ["Agent 'Ops' (task 'tidy') wants to call remove({\"path\": \"/tmp/y.log\"}). Approve it?"]
    assert not result.is_error and result.meta["status"] == "done", result.content
    calls = RunStore(server["store"]).tool_calls(result.meta["run_id"])
    assert [(call.tool, call.status) for call in calls] == [("remove", "success")]


def test_a_denial_through_elicitation_reaches_the_agent(server: dict[str, Any]) -> None:
    from mcp_types import ElicitResult

    async def elicit(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"approve": False, "reason": "keep the logs"})

    held = Held(lambda: _client(server["url"], elicitation_callback=elicit, mode="legacy"))
    try:
        result = held.run(lambda c: c.call_tool("gate", {}))
    finally:
        held.close()
    assert result.meta["status"] == "done"
    calls = RunStore(server["store"]).tool_calls(result.meta["run_id"])
    assert [call.status for call in calls] == ["error"] and "keep the logs" in (calls[0].result or "")


def test_a_crew_uses_a_served_crew_as_a_tool_source(server: dict[str, Any], tmp_path: Path) -> None:
    """crew's own MCP client (an mcp_servers: entry) in this process; the served crew runs in the other."""
    from crew.config import load_project
    from crew.testing import TestModel

    (tmp_path / "crew.yaml").write_text(
        "name: outer\n"
        "mcp_servers:\n"
        f'  crews: {{url: "{server["url"]}", headers: {{Authorization: "Bearer {TOKEN}"}}}}\n'
        "agents:\n  lead: {role: Lead, goal: Delegate, backstory: Asks other crews., mcp: [crews]}\n"
        "tasks:\n  ask: {description: Get a brief., expected_output: A brief., agent: lead}\n"
    )
    crew = load_project(tmp_path).crew
    crew.agents[0].llm = TestModel()  # calls each tool once, arguments made from its input schema
    before = {run.id for run in RunStore(server["store"]).runs()}
    output = crew.kickoff()
    stats = {name: (s.calls, s.errors) for name, s in output.tool_stats.items()}
    assert stats["brief"] == (1, 0), stats
    new = {run.crew: run.status for run in RunStore(server["store"]).runs() if run.id not in before}
    assert new["brief"] == "done"


def _gate_call(server: dict[str, Any], decision: dict[str, Any]) -> tuple[Any, list[str]]:
    """A gate call from the SDK client in its default mode, its elicitation form answered with ``decision``."""
    from mcp_types import ElicitResult

    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content=decision)

    held = Held(lambda: _client(server["url"], elicitation_callback=elicit))
    try:
        assert held.client.protocol_version == "2026-07-28"  # the mode with no way to ask mid-call
        result = held.run(lambda c: c.call_tool("gate", {"path": "/tmp/z.log"}))
    finally:
        held.close()
    return result, asked


def test_a_current_client_is_asked_through_input_required_rounds(server: dict[str, Any]) -> None:
    """The SDK client's default mode has no back channel: the question rides an InputRequiredResult."""
    result, asked = _gate_call(server, {"approve": True, "reason": ""})
    assert asked == ["Agent 'Ops' (task 'tidy') wants to call remove({\"path\": \"/tmp/z.log\"}). Approve it?"]
    assert not result.is_error and result.meta["status"] == "done", result.content
    calls = RunStore(server["store"]).tool_calls(result.meta["run_id"])
    assert [(call.tool, call.status) for call in calls] == [("remove", "success")]


def test_a_denial_in_an_input_required_round_reaches_the_agent(server: dict[str, Any]) -> None:
    result, _ = _gate_call(server, {"approve": False, "reason": "not that one"})
    assert result.meta["status"] == "done"
    (call,) = RunStore(server["store"]).tool_calls(result.meta["run_id"])
    assert call.status == "error" and "not that one" in (call.result or "")
