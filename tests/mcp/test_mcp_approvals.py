"""MCPServer(approve_destructive=True): the tools a server marks destructiveHint need a person's approval."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp", reason="the mcp extra is in the dev extra")

from mcp_kit import demo_server

from crew import Approval
from crew.mcp import MCPServer
from crew.tools import ToolExecutor


def test_destructive_tools_wait_for_approval_and_the_others_do_not() -> None:
    calls: list = []
    with MCPServer.in_process(demo_server(calls=calls), approve_destructive=True) as server:
        tools = {t.name: t for t in server.list_tools()}
        assert tools["explode"].requires_approval is True  # marked destructiveHint: true
        assert tools["add"].requires_approval is False and tools["search"].requires_approval is False
        executor = ToolExecutor(list(tools.values()))
        waiting = executor.execute({"name": "explode", "args": {"reason": "now"}})
        assert waiting.pending and calls == []  # nothing reached the server
        assert executor.execute({"name": "add", "args": {"a": 1}}).content == "3"
        executor.approver = lambda request: Approval.deny("not on prod")
        denied = executor.execute({"name": "explode", "args": {"reason": "now"}})
        assert denied.content == "denied by a person: not on prod" and [c[0] for c in calls] == ["add"]
    with MCPServer.in_process(demo_server()) as plain:
        assert not any(t.requires_approval for t in plain.list_tools())
