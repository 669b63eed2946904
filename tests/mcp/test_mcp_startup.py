"""A run's start-up names its MCP servers: each opening is an ``mcp.start`` event, a row of
the run store, and a named mark in the timeline's start-up row (a failure too)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is in the dev extra")

from mcp_kit import demo_server

from crew import Agent, Crew, Task
from crew.common.events import bus
from crew.errors import MCPStartupError
from crew.mcp import MCPServer
from crew.store import RunStore
from crew.store.timeline import render_timeline
from crew.testing import FunctionModel


def _crew(server: MCPServer, store: Path) -> Crew:
    agent = Agent(role="Clerk", goal="g", llm=FunctionModel(lambda messages: "done"), mcp=[server])
    return Crew(agents=[agent], tasks=[Task(name="t", description="d", expected_output="x", agent=agent)], store=store)


def test_each_server_opened_is_an_event_a_stored_step_and_a_named_mark(tmp_path: Path) -> None:
    events = []
    unsubscribe = bus.subscribe(lambda e: events.append(e) if e.type == "mcp.start" else None)
    try:
        out = _crew(MCPServer.in_process(demo_server("demo")), tmp_path / "runs.db").kickoff()
    finally:
        unsubscribe()
    (event,) = events
    assert event.run_id == out.run_id
    assert event.data["server"] == "demo" and event.data["transport"] == "in_process" and event.data["tools"] == 4
    assert event.data["error"] is None
    detail = RunStore(tmp_path / "runs.db").detail(out.run_id)
    (step,) = detail.startup
    assert (step.kind, step.name, step.transport, step.tools, step.error) == ("mcp", "demo", "in_process", 4, None)
    first_task = min(t.started_at for t in detail.tasks if t.started_at is not None)
    assert detail.run.started_at <= step.started_at <= step.started_at + step.duration <= first_task
    page = render_timeline(detail)
    assert 'data-server="demo"' in page and "MCP server &#x27;demo&#x27; (in_process) · ready in" in page
    assert "4 tools" in page and "· MCP: demo" in page


def test_a_server_that_fails_to_start_is_stored_with_its_failure(tmp_path: Path) -> None:
    broken = MCPServer.stdio(sys.executable, args=["-c", "pass"], name="broken", timeout=10)
    with pytest.raises(MCPStartupError):
        _crew(broken, tmp_path / "runs.db").kickoff()
    detail = RunStore(tmp_path / "runs.db").detail()
    assert detail.run.status == "failed"
    (step,) = detail.startup
    assert step.name == "broken" and step.transport == "stdio" and step.tools == 0
    assert step.error is not None and "broken" in step.error
    page = render_timeline(detail)
    assert 'class="server error" data-server="broken"' in page and "failed after" in page
