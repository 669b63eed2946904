"""What serving a crew adds to a kickoff: MCP over streamable HTTP and A2A, against the same kickoff in-process.

Run: python benchmarks/serve_overhead.py

The crew is tests/serve/crews/brief (two tasks on the offline test model, no store), so the
kickoff itself costs the same each way. In-process: ``Kickoffs.run`` of the crew in this
process, as a server runs it. Served: ``crew serve`` as a real process on 127.0.0.1, called
with the MCP SDK's client (``tools/call`` over streamable HTTP) and with the a2a-sdk's client
(``message/send``), one call at a time. Each figure is the median of ``ROUNDS`` calls after a
warm-up; the added latency is served minus in-process. Then ``CONCURRENT`` calls at once through
MCP HTTP, which must all succeed.

Beside each figure, the bare SDK's: the MCP SDK's own server with a do-nothing tool, and the
a2a-sdk's own server with a do-nothing executor (a task, working, completed), each a process
of its own under uvicorn (this script with ``--bare mcp|a2a PORT``), called the same way. That
is what the transport costs with no crew at all; served minus in-process minus bare is what
crew itself adds. On a loaded machine every wake-up after an await waits for a time slice, so
the bare figures rise with the load, and so do the served ones.

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


def _serve(mode: str, port: int, *, bare: bool = False) -> subprocess.Popen[bytes]:
    """``crew serve`` (or, ``bare``, the SDK's own server: this script with ``--bare MODE PORT``) as a process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if bare:
        args = [sys.executable, str(Path(__file__).resolve()), "--bare", mode, str(port)]
    else:
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


async def over_mcp(port: int, *, concurrent: bool = True) -> tuple[float, int, float]:
    from mcp import Client

    async with Client(f"http://127.0.0.1:{port}/mcp") as client:

        async def call() -> None:
            result = await client.call_tool("brief", INPUTS)
            if result.is_error:
                raise RuntimeError(result.content)

        median = await _median(call)
        if not concurrent:
            return median, 0, 0.0
        start = time.perf_counter()
        results = await asyncio.gather(
            *(client.call_tool("brief", INPUTS) for _ in range(CONCURRENT)), return_exceptions=True
        )
        spent = time.perf_counter() - start
    errors = sum(1 for r in results if isinstance(r, BaseException) or r.is_error)
    return median, errors, spent


def bare_mcp(port: int) -> None:
    """The MCP SDK's own server with one do-nothing tool, under uvicorn: the transport alone."""
    import uvicorn
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bare", log_level="WARNING")

    @server.tool()
    async def brief(audience: str) -> str:
        """Do nothing."""
        return audience

    uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="error", access_log=False)


def bare_a2a(port: int) -> None:
    """The a2a-sdk's own server with a do-nothing executor (a task, working, completed), under uvicorn."""
    import uvicorn
    from a2a.helpers.proto_helpers import new_task, new_text_part
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes.agent_card_routes import create_agent_card_routes
    from a2a.server.routes.jsonrpc_routes import create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, TaskState
    from starlette.applications import Starlette

    class Nothing(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            task_id, context_id = context.task_id or "", context.context_id or ""
            updater = TaskUpdater(event_queue, task_id, context_id)
            history = [context.message] if context.message is not None else []
            await event_queue.enqueue_event(
                new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=history)
            )
            await updater.start_work(updater.new_agent_message([new_text_part("working")]))
            await updater.complete(updater.new_agent_message([new_text_part("done")]))

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            return None

    card = AgentCard(
        name="bare",
        description="does nothing",
        version="0",
        supported_interfaces=[
            AgentInterface(url=f"http://127.0.0.1:{port}/", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["application/json"],
        default_output_modes=["text/plain"],
    )
    handler = DefaultRequestHandler(agent_executor=Nothing(), task_store=InMemoryTaskStore(), agent_card=card)
    app = Starlette(routes=create_agent_card_routes(card) + create_jsonrpc_routes(handler, "/"))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False)


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


def _measured(mode: str, *, bare: bool) -> tuple[float, int, float]:
    port = _port()
    server = _serve(mode, port, bare=bare)
    try:
        if mode == "mcp":
            return asyncio.run(over_mcp(port, concurrent=not bare))
        return asyncio.run(over_a2a(port)), 0, 0.0
    finally:
        server.terminate()
        server.wait(30)


def _report(label: str, served: float, bare: float, local: float) -> None:
    added = served - local
    print(f"{label:<32}{served:7.2f} ms   added {added:6.2f} ms   goal < 5 ms  {'ok' if added < 5 else 'MISSED'}")
    print(f"  the bare SDK (do-nothing {'tool' if 'MCP' in label else 'executor'}): {bare:6.2f} ms; ", end="")
    print(f"crew's own part of the added latency: {added - bare:6.2f} ms")


def main() -> None:
    if sys.argv[1:2] == ["--bare"]:
        (bare_mcp if sys.argv[2] == "mcp" else bare_a2a)(int(sys.argv[3]))
        return
    local = asyncio.run(in_process())
    print(f"in-process kickoff (median of {ROUNDS}):  {local:7.2f} ms")
    mcp, errors, spent = _measured("mcp", bare=False)
    _report("MCP streamable HTTP tools/call:", mcp, _measured("mcp", bare=True)[0], local)
    print(f"{CONCURRENT} concurrent MCP calls:            {errors} errors in {spent:.2f} s   goal: 0 errors  ", end="")
    print("ok" if errors == 0 else "MISSED")
    try:
        import a2a  # noqa: F401
    except ImportError:
        print("A2A: skipped (pip install 'crew-agents[a2a]')")
        return
    _report("A2A message/send:", _measured("a2a", bare=False)[0], _measured("a2a", bare=True)[0], local)


if __name__ == "__main__":
    main()
