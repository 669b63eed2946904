"""What crew adds to an MCP tool call, and how long opening a stdio server takes.

Run: python benchmarks/mcp_overhead.py

1. The same ``add`` call to the SDK's in-process server, in one event loop and one run:
   through the bare SDK client (``client.call_tool``) and through crew (``ToolExecutor``
   with caching off, so every call reaches the server: schema validation, the executor's
   bookkeeping, result mapping). The paths alternate in short rounds (and which goes first
   alternates too) so both see the same machine; the best round of each is compared.
   Goal: crew adds under 10 % or under 50 µs per call.
2. ``MCPServer.stdio("mcp-server-time")``: open (spawn, handshake, tools/list) and close,
   a few times; the median is printed (no goal: it is the server's own start-up).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp import Client
from mcp.server.mcpserver import MCPServer as SDKServer

from crew.mcp import MCPServer
from crew.tools import ToolCall, ToolExecutor

CALLS_PER_ROUND = 100
ROUNDS = 30


def sdk_server() -> SDKServer:
    server = SDKServer("bench")

    @server.tool()
    async def add(a: int, b: int = 2) -> int:  # async: no worker-thread hop (and its noise) on either path
        """Add two integers."""
        return a + b

    return server


async def per_call() -> tuple[float, float]:
    """Best per-call time of each path over alternating rounds (who goes first alternates too)."""
    bare_best = crew_best = float("inf")
    async with Client(sdk_server(), cache=None) as client, MCPServer.in_process(sdk_server()) as server:
        executor = ToolExecutor(await server.alist_tools(), cache=False)
        call = ToolCall(name="add", args={"a": 1, "b": 2}, id="call_bench")

        async def bare() -> float:
            started = time.perf_counter()
            for _ in range(CALLS_PER_ROUND):
                await client.call_tool("add", {"a": 1, "b": 2})
            return (time.perf_counter() - started) / CALLS_PER_ROUND

        async def crewed() -> float:
            started = time.perf_counter()
            for _ in range(CALLS_PER_ROUND):
                result = await executor.aexecute(call)
            assert result.status == "success" and result.content == "3", result
            return (time.perf_counter() - started) / CALLS_PER_ROUND

        for _ in range(3):  # warm both paths
            await bare()
            await crewed()
        for round_ in range(ROUNDS):
            if round_ % 2:
                crew_best = min(crew_best, await crewed())
                bare_best = min(bare_best, await bare())
            else:
                bare_best = min(bare_best, await bare())
                crew_best = min(crew_best, await crewed())
    return bare_best, crew_best


def stdio_open(times: int = 3) -> float:
    durations = []
    for _ in range(times):
        server = MCPServer.stdio("mcp-server-time", args=["--local-timezone", "UTC"])
        started = time.perf_counter()
        server.open()
        durations.append(time.perf_counter() - started)
        server.close()
    return statistics.median(durations)


def main() -> None:
    bare, crewed = asyncio.run(per_call())
    added = crewed - bare
    ratio = crewed / bare
    ok = ratio < 1.10 or added < 50e-6
    print(f"in-process MCP call, bare SDK client : {bare * 1e6:8.1f} µs/call")
    print(f"in-process MCP call, through crew    : {crewed * 1e6:8.1f} µs/call")
    print(
        f"crew adds                            : {added * 1e6:8.1f} µs/call = {100 * (ratio - 1):+.1f} %   "
        f"goal: < 10 % or < 50 µs  {'OK' if ok else 'MISSED'}"
    )
    print(f"open + list tools of mcp-server-time : {stdio_open() * 1e3:8.0f} ms (median of 3; spawn + handshake)")


if __name__ == "__main__":
    main()
