"""What every door shares, checked in this process: budgets, the bound on concurrent kickoffs, secrets kept out."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is in the dev extra")

from serve_kit import CREWS

from crew.cli.parser import build_parser
from crew.cli.serve import _load
from crew.serve.kickoffs import Kickoffs
from crew.serve.mcp_server import build_mcp_server
from crew.store import RunStore


def served(tmp_path: Path, *extra: str) -> list[Any]:
    """The crews as ``crew serve`` loads them (its flags applied), recorded in a store of this test."""
    argv = ["serve", "--mcp", str(CREWS / "brief"), str(CREWS / "slow"), str(CREWS / "gate"), "--live-tools"]
    return _load(build_parser().parse_args([*argv, "--store", str(tmp_path / "runs.db"), *extra]))


async def test_a_budget_stops_a_served_run_and_the_error_says_so(tmp_path: Path) -> None:
    from mcp import Client

    server = build_mcp_server(served(tmp_path, "--max-tokens", "5"), Kickoffs(2))
    async with Client(server) as client:
        result = await client.call_tool("brief", {"audience": "x"})
    assert result.is_error and result.meta["status"] == "failed"
    assert "max_tokens" in result.content[0].text
    assert RunStore(tmp_path / "runs.db").run(result.meta["run_id"]).status == "failed"


async def test_no_more_kickoffs_run_at_once_than_the_bound(tmp_path: Path) -> None:
    brief, slow, _ = served(tmp_path)
    kickoffs = Kickoffs(1)
    holding = asyncio.Event()

    async def on_event(event: Any) -> None:
        if event.type == "tool.started":
            holding.set()

    first = asyncio.ensure_future(kickoffs.run(slow, slow.check_inputs({}), on_event=on_event))
    await asyncio.wait_for(holding.wait(), 30)
    second = asyncio.ensure_future(kickoffs.run(brief, brief.check_inputs({"audience": "x"})))
    await asyncio.sleep(0)  # the second asks for a slot
    assert list(kickoffs.running.values()) == ["slow"] and not second.done()
    first.cancel()
    output = await asyncio.wait_for(second, 30)  # the slot freed: the second runs
    assert output.status == "done"
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_a_secret_is_masked_in_the_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp import Client

    from crew.common.secrets import register_environment

    secret = "served-secret-value-0123456789"
    monkeypatch.setenv("SERVE_DEMO_API_KEY", secret)
    register_environment()
    server = build_mcp_server(served(tmp_path), Kickoffs(2))
    async with Client(server) as client:
        result = await client.call_tool("gate", {"path": secret})  # paused: the waiting call's arguments are shown
    text = str(result.model_dump())
    assert result.meta["status"] == "paused" and secret not in text
    assert 'remove({"path": "***"})' in result.content[0].text


async def test_max_rpm_counts_across_every_kickoff_of_a_served_crew(tmp_path: Path) -> None:
    """One limiter per served crew: each kickoff's model calls take their slots from the same budget."""
    brief = served(tmp_path)[0]
    brief.crew.max_rpm = 10_000  # high: nothing waits, but every request reserves a slot
    kickoffs = Kickoffs(4)
    inputs = brief.check_inputs({"audience": "x"})
    await kickoffs.run(brief, inputs)
    one_run = len(brief.crew.limiter._starts)
    await asyncio.gather(kickoffs.run(brief, inputs), kickoffs.run(brief, inputs))
    assert one_run > 0 and len(brief.crew.limiter._starts) == 3 * one_run
    assert brief.fresh_crew(inputs).limiter is brief.crew.limiter
