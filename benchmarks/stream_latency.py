"""Latency of a streamed text delta: from leaving the local server to reaching the consumer.

Run: python benchmarks/stream_latency.py [--chunks 400] [--delay 0.002]

A crew of one agent on real litellm talks to ``crew.testing.OpenAIServer`` on 127.0.0.1;
the server streams its reply as server-sent events, ``--delay`` seconds apart, and notes
the ``perf_counter`` the moment each chunk is flushed to the socket (``on_chunk``). The
consumer of ``Crew.astream`` notes the moment each ``TextDelta`` reaches it. Every chunk
carries a unique 8-character piece, so each delta is matched with its chunk exactly. The
figures cover the whole path: socket, litellm's SSE parsing, the model contract's
``astream``, the run scope's delta sink, the stream buffer and the reader's task switch.
Both clocks are the same (one process: the server runs in a thread).

Goal: median under 1 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from crew import Agent, Crew, Task, TextDelta
from crew.models import LLM
from crew.testing import OpenAIServer, Reply

GOAL_MEDIAN_MS = 1.0


async def measure(chunks: int, delay: float) -> list[float]:
    pieces = [f"{i:07d} " for i in range(chunks)]  # 8 characters: the server's chunk size
    sent: dict[str, float] = {}
    with OpenAIServer() as server:

        def on_chunk(chunk: dict) -> None:
            choices = chunk.get("choices") or []
            text = (choices[0].get("delta") or {}).get("content") if choices else None
            if text:
                sent[text] = time.perf_counter()

        server.on_chunk = on_chunk
        server.enqueue(Reply.text("warm up"), Reply.text("".join(pieces), chunk_delay=delay))
        llm = LLM("openai/gpt-4o-mini", api_base=server.url, api_key="sk-test", num_retries=0)
        agent = Agent(role="Writer", goal="write", llm=llm)
        warm = Crew(agents=[agent], tasks=[Task(name="warm", description="w", expected_output="x", agent=agent)])
        async for _ in warm.astream():  # litellm's import and first connection are not what we measure
            pass
        crew = Crew(agents=[agent], tasks=[Task(name="write", description="w", expected_output="x", agent=agent)])
        latencies: list[float] = []
        async for event in crew.astream():
            if isinstance(event, TextDelta):
                arrived = time.perf_counter()
                left = sent.get(event.text)
                if left is not None:
                    latencies.append((arrived - left) * 1000)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=400)
    parser.add_argument("--delay", type=float, default=0.002, help="seconds between the server's chunks")
    args = parser.parse_args()
    latencies = asyncio.run(measure(args.chunks, args.delay))
    if not latencies:
        raise SystemExit("no delta was matched with a chunk: the stream did not arrive piece by piece")
    latencies.sort()
    median = statistics.median(latencies)
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(f"deltas matched: {len(latencies)} of {args.chunks} (chunks {args.delay * 1000:g} ms apart)")
    print(f"server -> consumer latency: median {median:.3f} ms, p99 {p99:.3f} ms, max {latencies[-1]:.3f} ms")
    verdict = "OK" if median < GOAL_MEDIAN_MS else "MISSED"
    print(f"goal: median < {GOAL_MEDIAN_MS:g} ms -> {verdict}")


if __name__ == "__main__":
    main()
