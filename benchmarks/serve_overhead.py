"""What serving a crew adds to a kickoff: MCP over streamable HTTP and A2A, against the same kickoff in-process.

Run: python benchmarks/serve_overhead.py

The crew is tests/serve/crews/brief (two tasks on the offline test model, no store), so the
kickoff itself costs the same each way. In-process: ``Kickoffs.run`` of the crew in this
process, as a server runs it. Served: ``crew serve`` as a real process on 127.0.0.1, called
with the MCP SDK's client (``tools/call`` over streamable HTTP) and with the a2a-sdk's client
(``message/send``), one call at a time. Each figure is the median of ``ROUNDS`` calls after a
warm-up; the added latency is served minus in-process. Then ``CONCURRENT`` calls at once through
MCP HTTP, which must all succeed.

The SDK's floor is printed beside the MCP figure: the SDK's own server with a tool that only
awaits as long as the kickoff takes. On a loaded machine every wake-up after an await waits for
a time slice, so a call that awaits for milliseconds costs more than its own work: the floor
shows how much of the added latency is the transport and the machine, not crew.

Goals: added latency under 5 ms (MCP HTTP, A2A); 100 concurrent MCP calls, no error.
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CREW = ROOT / "tests" / "serve" / "crews" / "brief"
ROUNDS = 40
CONCURRENT = 100
INPUTS = {"audience": "engineers"}


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(mode: str, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "crew", "serve", str(CREW), "--no-store", "--max-concurrency", "16"]
    args += ["--mcp", "--http", f"127.0.0.1:{port}"] if mode == "mcp" else ["--a2a", f"127.0.0.1:{port}"]
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return process
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"crew serve --{mode} did not start")


async def _median(call: Any) -> float:
    for _ in range(5):
        await call()
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        await call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


async def in_process() -> float:
    from crew.serve.kickoffs import Kickoffs
    from crew.serve.served import load_served

    served = load_served(CREW)
    kickoffs = Kickoffs(16)
    inputs = served.check_inputs(INPUTS)

    async def call() -> None:
        await kickoffs.run(served, inputs)

    return await _median(call)


async def over_mcp(port: int) -> tuple[float, int, float]:
    from mcp import Client

    async with Client(f"http://127.0.0.1:{port}/mcp") as client:

        async def call() -> None:
            result = await client.call_tool("brief", INPUTS)
            if result.is_error:
                raise RuntimeError(result.content)

        median = await _median(call)
        start = time.perf_counter()
        results = await asyncio.gather(
            *(client.call_tool("brief", INPUTS) for _ in range(CONCURRENT)), return_exceptions=True
        )
        spent = time.perf_counter() - start
    errors = sum(1 for r in results if isinstance(r, BaseException) or r.is_error)
    return median, errors, spent


def sdk_floor(tool_ms: float) -> float:
    """The MCP SDK's own server, under uvicorn on 127.0.0.1, with one tool that awaits ``tool_ms``:
    what any MCP tool of that duration costs over streamable HTTP, crew or not."""
    import threading

    import uvicorn
    from mcp import Client
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("floor", log_level="WARNING")

    @server.tool()
    async def wait(audience: str) -> str:
        """Wait as long as the kickoff takes."""
        await asyncio.sleep(tool_ms / 1000)
        return audience

    port = _port()
    config = uvicorn.Config(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="error")
    web = uvicorn.Server(config)
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    while not web.started:
        time.sleep(0.02)

    async def measure() -> float:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:

            async def call() -> None:
                await client.call_tool("wait", INPUTS)

            return await _median(call)

    try:
        return asyncio.run(measure())
    finally:
        web.should_exit = True
        thread.join(10)


async def over_a2a(port: int) -> float:
    import httpx
    from a2a.client import ClientConfig, create_client
    from a2a.helpers.proto_helpers import new_data_part
    from a2a.types.a2a_pb2 import Message, Role, SendMessageRequest, TaskState

    async with httpx.AsyncClient(timeout=60) as http:
        client = await create_client(f"http://127.0.0.1:{port}/", ClientConfig(httpx_client=http, streaming=False))

        async def call() -> None:
            message = Message(
                role=Role.ROLE_USER, message_id=uuid.uuid4().hex, parts=[new_data_part({"inputs": INPUTS})]
            )
            async for item in client.send_message(SendMessageRequest(message=message)):
                if item.task.status.state != TaskState.TASK_STATE_COMPLETED:
                    raise RuntimeError(str(item))

        return await _median(call)


def main() -> None:
    local = asyncio.run(in_process())
    print(f"in-process kickoff (median of {ROUNDS}):  {local:7.2f} ms")
    port = _port()
    server = _serve("mcp", port)
    try:
        mcp, errors, spent = asyncio.run(over_mcp(port))
    finally:
        server.terminate()
        server.wait(30)
    added = mcp - local
    print(f"MCP streamable HTTP tools/call:       {mcp:7.2f} ms   added {added:6.2f} ms   goal < 5 ms  ", end="")
    print("ok" if added < 5 else "MISSED")
    floor = sdk_floor(local)
    print(f"  the SDK's floor: a tool awaiting {local:.1f} ms costs {floor:7.2f} ms over the same transport; ", end="")
    print(f"crew adds {mcp - floor:6.2f} ms to it")
    print(f"{CONCURRENT} concurrent MCP calls:            {errors} errors in {spent:.2f} s   goal: 0 errors  ", end="")
    print("ok" if errors == 0 else "MISSED")
    try:
        import a2a  # noqa: F401
    except ImportError:
        print("A2A: skipped (pip install 'crew-agents[a2a]')")
        return
    port = _port()
    server = _serve("a2a", port)
    try:
        a2a_ms = asyncio.run(over_a2a(port))
    finally:
        server.terminate()
        server.wait(30)
    added = a2a_ms - local
    print(f"A2A message/send:                     {a2a_ms:7.2f} ms   added {added:6.2f} ms   goal < 5 ms  ", end="")
    print("ok" if added < 5 else "MISSED")


if __name__ == "__main__":
    main()
