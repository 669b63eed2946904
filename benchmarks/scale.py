"""A thousand kickoffs in one process: crew's wall time and memory against the bare transport.

Run: python benchmarks/scale.py [--quick] [--latency 0.1] [--sizes 10,100,1000,5000] [--cli]

One crew (one agent, one task, one native tool call: two model calls a kickoff) is kicked
off N times at once (``kickoff_for_each_async(inputs, max_concurrency=N)``) against an
asyncio OpenAI-compatible stub that answers every request after ``--latency`` seconds. The
stub runs in a process of its own, so it never shares the client's event loop; each row
runs in a fresh client process, so its peak RSS is its own. The floor is the bare
transport: an aiohttp session doing the same 2N requests (two after each other per
kickoff), no crew, against the same stub in the same run. The ideal wall is two latencies
whatever N.

Printed per row: wall, wall / ideal, the requests the stub saw (must be 2N), the peak in
flight, peak RSS, RSS per concurrent kickoff above the process's baseline (its RSS after one
warm-up kickoff), and every output checked (the tool doubles the kickoff's number; the
answer must be that number). Goals, as ratios within one run: crew's wall at most 1.5x the
bare transport's at N = 1,000 and at most 2x at N = 5,000; at most 100 KB per concurrent
kickoff; no request lost, every output right. ``--cli`` adds ``crew kickoff --for-each``
over 5,000 lines of JSONL with ``--max-concurrency 1000`` (against 2 x 5,000 bare requests at
1,000 at once), with its run store and with ``--no-store``, beside the library's
``kickoff_for_each_async`` of the same batch. ``--quick`` stops at N = 1,000.

On 2 cores the stub and the client share the machine, and other work on it moves every
figure: compare the ratios of one run, not walls across runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WALL_GOALS = {1000: 1.5, 5000: 2.0}
KB_GOAL = 100.0
_NUMBER = re.compile(r"number (\d+)")


# -- the stub: an asyncio HTTP/1.1 server speaking just enough of chat completions ------------


class Stub:
    """Answers every POST after ``latency`` s: a call to ``double`` first, then the tool's result as the answer."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.requests = self.in_flight = self.peak = 0

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        last = body["messages"][-1]
        if last.get("role") == "tool":
            message: dict[str, Any] = {"role": "assistant", "content": str(last["content"])}
            finish = "stop"
        else:
            found = _NUMBER.findall(" ".join(str(m.get("content")) for m in body["messages"]))
            arguments = json.dumps({"x": int(found[-1]) if found else 0})
            call = {"id": "call_1", "type": "function", "function": {"name": "double", "arguments": arguments}}
            message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        return {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": message,
                "finish_reason": finish}], "usage": usage}  # fmt: skip

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1)) if b"ength" in head else 0  # type: ignore[union-attr]
                raw = await reader.readexactly(length) if length else b""
                out = await self.answer(head, raw)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                             % (len(out), out))  # fmt: skip
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def answer(self, head: bytes, raw: bytes) -> bytes:
        if head.startswith(b"GET /stats"):
            return json.dumps({"requests": self.requests, "peak_flight": self.peak}).encode()
        if head.startswith(b"GET /reset"):
            self.requests = self.peak = 0
            return b"{}"
        self.requests += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.latency)
            return json.dumps(self.reply(json.loads(raw))).encode()
        finally:
            self.in_flight -= 1


async def serve(latency: float) -> None:
    stub = Stub(latency)
    server = await asyncio.start_server(stub.handle, "127.0.0.1", 0, backlog=8192)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", flush=True)
    async with server:
        await server.serve_forever()


def stub_call(url: str, what: str) -> dict[str, Any]:
    import urllib.request

    with urllib.request.urlopen(url.removesuffix("/v1") + "/" + what, timeout=30) as answer:
        return json.loads(answer.read())


# -- one row, in a fresh client process -------------------------------------------------------


class Memory:
    """Peak RSS, sampled by a thread every 2 ms (the loop's work is untouched)."""

    def __init__(self) -> None:
        self.peak = self.baseline = rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.002):
            self.peak = max(self.peak, rss())

    def __enter__(self) -> Memory:
        self.baseline = self.peak = rss()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss())


def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def make_crew(url: str, connections: int | None = None) -> Any:
    from crew import LLM, Agent, Crew, Task, tool

    @tool
    def double(x: int) -> int:
        """Double a number.

        Args:
            x: the number to double.
        """
        return 2 * x

    extra: dict[str, Any] = {} if connections is None else {"max_connections": connections}
    llm = LLM("openai/gpt-4o-mini", api_base=url, api_key="sk-bench", transport="native", **extra)
    agent = Agent(role="Doubler", goal="Double numbers", backstory="Exact.", llm=llm, tools=[double])
    task = Task(description="Double the number {n}.", expected_output="the number", agent=agent)
    return Crew(agents=[agent], tasks=[task])


async def crew_row(url: str, n: int, concurrency: int | None = None) -> dict[str, Any]:
    crew = make_crew(url)
    await crew.kickoff_for_each_async([{"n": 1}], max_concurrency=1)  # warm: imports, pools, caches
    stub_call(url, "reset")
    inputs = [{"n": i} for i in range(n)]
    with Memory() as memory:
        started = time.perf_counter()
        outputs = await crew.kickoff_for_each_async(inputs, max_concurrency=concurrency or n)
        wall = time.perf_counter() - started
    wrong = sum(out.raw.strip() != str(2 * i) for i, out in enumerate(outputs)) + n - len(outputs)
    return {"wall": wall, "wrong": wrong, "baseline": memory.baseline, "peak": memory.peak}


async def bare_row(url: str, n: int) -> dict[str, Any]:
    import aiohttp

    def body(i: int, second: bool) -> dict[str, Any]:
        messages: list[dict[str, Any]] = [{"role": "user", "content": f"Double the number {i}."}]
        if second:
            messages.append({"role": "tool", "tool_call_id": "call_1", "content": str(2 * i)})
        return {"model": "gpt-4o-mini", "messages": messages}

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def one(i: int) -> bool:
            async with session.post(url + "/chat/completions", json=body(i, False)) as answer:
                first = await answer.json()
            x = json.loads(first["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])["x"]
            async with session.post(url + "/chat/completions", json=body(i, True)) as answer:
                second = await answer.json()
            return x == i and second["choices"][0]["message"]["content"] == str(2 * i)

        await one(1)
        stub_call(url, "reset")
        with Memory() as memory:
            started = time.perf_counter()
            right = await asyncio.gather(*(one(i) for i in range(n)))
            wall = time.perf_counter() - started
    return {"wall": wall, "wrong": right.count(False), "baseline": memory.baseline, "peak": memory.peak}


def child(mode: str, url: str, n: int) -> None:
    if mode == "bare":
        row = asyncio.run(bare_row(url, n))
    else:  # "crew", or "crew@C": C kickoffs at a time
        row = asyncio.run(crew_row(url, n, int(mode.partition("@")[2] or 0) or None))
    row.update(stub_call(url, "stats"))
    print(json.dumps(row), flush=True)


def run_row(mode: str, url: str, n: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, url, str(n)], capture_output=True, text=True, timeout=900
    )
    if done.returncode:
        sys.exit(f"{mode} N={n} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- the command line: crew kickoff --for-each --------------------------------------------------

_TOOLS = '''from crew import tool


@tool
def double(x: int) -> int:
    """Double a number.

    Args:
        x: the number to double.
    """
    return 2 * x
'''


def cli_row(url: str, n: int, concurrency: int, *, store: bool = True) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "tools.py").write_text(_TOOLS)
        (root / "crew.yaml").write_text(
            f"llm: {{model: openai/gpt-4o-mini, api_base: '{url}', api_key: sk-bench, transport: native}}\n"
            "tools:\n  double: tools:double\n"
            "agents:\n  doubler: {role: Doubler, goal: Double numbers, backstory: Exact., tools: [double]}\n"
            "tasks:\n  double: {description: 'Double the number {n}.', expected_output: the number, agent: doubler}\n"
        )
        lines = root / "inputs.jsonl"
        lines.write_text("".join(json.dumps({"n": i}) + "\n" for i in range(n)))
        stub_call(url, "reset")
        command = [sys.executable, "-m", "crew", "kickoff", str(root), "--for-each", str(lines), "--max-concurrency",
                   str(concurrency), *([] if store else ["--no-store"])]  # fmt: skip
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=root, env=_env())
        wall = time.perf_counter() - started
    if done.returncode:
        sys.exit(f"crew kickoff --for-each failed ({done.returncode}):\n{done.stderr[-3000:]}")
    results = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    right = {r.get("index"): r for r in results if r.get("status") == "done"}
    wrong = n - sum(str(right[i].get("output", {}).get("raw", "")).strip() == str(2 * i) for i in right)
    row = {
        "wall": wall,
        "wrong": wrong,
        "lines": len(results),
        "progress": any(line.startswith("[") for line in done.stderr.splitlines()),
    }
    row.update(stub_call(url, "stats"))
    return row


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


async def bare_batch(url: str, n: int, concurrency: int) -> float:
    """The floor of the CLI row: the same 2n requests, ``concurrency`` kickoffs' worth at a time."""
    import aiohttp

    gate = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def one(i: int) -> None:
            async with gate:
                for second in (False, True):
                    messages: list[dict[str, Any]] = [{"role": "user", "content": f"Double the number {i}."}]
                    if second:
                        messages.append({"role": "tool", "tool_call_id": "call_1", "content": str(2 * i)})
                    async with session.post(url + "/chat/completions", json={"messages": messages}) as answer:
                        await answer.read()

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        return time.perf_counter() - started


# -- the report --------------------------------------------------------------------------------


def show(mode: str, n: int, row: dict[str, Any], ideal: float, floor: float | None) -> None:
    mb = row["peak"] / 2**20
    per = (row["peak"] - row["baseline"]) / n / 1024
    requests = f"{row['requests']}/{2 * n}" + ("" if row["requests"] == 2 * n else " LOST")
    line = (
        f"{mode:5} N={n:<5} wall {row['wall']:6.2f} s  wall/ideal {row['wall'] / ideal:5.1f}  "
        f"requests {requests:>11}  peak in flight {row['peak_flight']:5}  peak RSS {mb:6.0f} MB  "
        f"{per:6.1f} KB/kickoff"
    )
    if mode == "crew":
        line += f" (goal <= {KB_GOAL:g})  wrong {row['wrong']} (goal 0)"
        if floor:
            goal = WALL_GOALS.get(n)
            line += f"  crew/bare {row['wall'] / floor:4.2f}" + (f" (goal <= {goal:g})" if goal else "")
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 1,000")
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--sizes", default="10,100,1000,5000")
    parser.add_argument("--cli", action="store_true", help="also crew kickoff --for-each over 5,000 lines")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.latency))
        return
    if args.child:
        mode, url, n = args.child
        child(mode, url, int(n))
        return
    sizes = [int(s) for s in args.sizes.split(",") if s and (not args.quick or int(s) <= 1000)]
    stub = subprocess.Popen([sys.executable, __file__, "--serve", "--latency", str(args.latency)],
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert stub.stdout is not None
        url = stub.stdout.readline().strip()
        ideal = 2 * args.latency
        print(f"stub at {url}, {args.latency * 1000:g} ms a request; ideal wall {ideal:g} s; {os.cpu_count()} cores")
        for n in sizes:
            bare = run_row("bare", url, n)
            show("bare", n, bare, ideal, None)
            row = run_row("crew", url, n)
            show("crew", n, row, ideal, bare["wall"])
        if args.cli:
            cli(url, ideal)
    finally:
        stub.terminate()
        stub.wait()


def cli(url: str, ideal: float) -> None:
    """The command, with its run store (as it runs by default) and with ``--no-store``, beside the
    library's ``kickoff_for_each_async`` of the same batch (same N, same concurrency) and the bare floor."""
    n, concurrency = 5000, 1000
    floor = asyncio.run(bare_batch(url, n, concurrency))
    library = run_row(f"crew@{concurrency}", url, n)
    ideal_batch = ideal * n / concurrency
    print(
        f"lib   N={n} at {concurrency}: wall {library['wall']:.2f} s  bare {floor:.2f} s  "
        f"crew/bare {library['wall'] / floor:.2f}  wrong {library['wrong']} (goal 0)"
    )
    for store in (True, False):
        row = cli_row(url, n, concurrency, store=store)
        print(
            f"cli   N={n} at {concurrency}{'' if store else ' --no-store'}: wall {row['wall']:.2f} s (process start "
            f"and exit included)  bare {floor:.2f} s  wall/ideal {row['wall'] / ideal_batch:.1f}  crew/bare "
            f"{row['wall'] / floor:.2f} (goal <= 1.5; library {library['wall'] / floor:.2f})  requests "
            f"{row['requests']}/{2 * n}  lines {row['lines']}/{n}  wrong {row['wrong']} (goal 0)  progress line "
            f"{'yes' if row['progress'] else 'no'}"
        )


if __name__ == "__main__":
    main()
