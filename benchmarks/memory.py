"""Memory and search figures, printed beside their goals.

Run: python benchmarks/memory.py [--sizes 10000 100000] [--queries 50]

1. Recall latency, p50 and p95, at each size: ``Memory.recall`` (the query embedded by the
   offline WordLlama, BM25 over FTS5, an exact dot product over every vector, reciprocal-rank
   fusion, the five records read back), after the first recall has loaded the vectors.
   Goal: p50 at most 20 ms at 100k records.
2. Ingest at each size: records remembered per second (batches of 1,000 through the index,
   each one transaction), and the first recall, which loads every vector into one matrix.

3. Knowledge (``benchmarks/knowledge_figures.py``, also runnable alone): ingest of a 10 MB text
   corpus and a 100-page PDF, and recall@5 on the labelled questions, keywords alone vs hybrid.
   ``--no-knowledge`` skips it.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crew.memory import Memory
from crew.search import Doc

RECALL_GOAL_MS = 20.0
_VOCABULARY = (
    "client report invoice deploy budget travel flight hotel weather museum coffee tea market python "
    "database schema release review meeting agenda deadline supplier contract price discount shipping "
    "warehouse ticket refund customer support outage latency cache server queue worker retry timeout"
)
WORDS = _VOCABULARY.split()


def _texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 24))) + f" note {i}" for i in range(count)]


def _fill(memory: Memory, count: int) -> float:
    """Remember ``count`` records (through the index, 1,000 a transaction); records per second."""
    texts = _texts(count, seed=count)
    started = time.perf_counter()
    for start in range(0, count, 1000):
        batch = texts[start : start + 1000]
        memory.index.add(
            [Doc(f"r{start + i}", text, f"/crew/bench/agent{(start + i) % 7}") for i, text in enumerate(batch)]
        )
    return count / (time.perf_counter() - started)


def _recalls(memory: Memory, queries: int) -> list[float]:
    rng = random.Random(7)
    times = []
    for _ in range(queries):
        query = " ".join(rng.choice(WORDS) for _ in range(6))
        started = time.perf_counter()
        memory.recall(query, limit=5)
        times.append((time.perf_counter() - started) * 1000)
    return times


def measure(size: int, queries: int, folder: Path) -> None:
    with Memory(folder / f"memory-{size}.db") as memory:
        rate = _fill(memory, size)
        started = time.perf_counter()
        memory.recall("warm up the vectors", limit=5)
        first = (time.perf_counter() - started) * 1000
        times = sorted(_recalls(memory, queries))
    p50 = statistics.median(times)
    p95 = times[int(0.95 * (len(times) - 1))]
    goal = f"(goal: p50 <= {RECALL_GOAL_MS:.0f} ms at 100k)" if size >= 100_000 else ""
    verdict = "" if size < 100_000 else ("  ok" if p50 <= RECALL_GOAL_MS else "  OVER GOAL")
    print(f"{size:>7,} records  recall p50 {p50:6.2f} ms  p95 {p95:6.2f} ms  {goal}{verdict}")
    print(f"{'':>16}ingest {rate:8,.0f} records/s   first recall (loads the vectors) {first:7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--no-knowledge", action="store_true", help="only the memory figures")
    args = parser.parse_args()
    print("memory recall (offline WordLlama embedder, hybrid FTS5 + exact vectors), one process")
    with tempfile.TemporaryDirectory(prefix="crew-memory-bench-") as tmp:
        for size in args.sizes:
            measure(size, args.queries, Path(tmp))
    if not args.no_knowledge:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from knowledge_figures import main as knowledge_figures

        print()
        knowledge_figures()


if __name__ == "__main__":
    main()
