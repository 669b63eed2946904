"""Memory and search figures, printed beside their goals.

Run: python benchmarks/memory.py [--sizes 10000 100000] [--queries 50] [--no-knowledge]

The corpus. Records are sentences of 8 to 40 words drawn from a Zipf distribution (exponent
1.0, as word frequencies in English text follow) over a vocabulary of 50,000 words: first the
2,700-odd words of crew's own ``docs/*.md``, most frequent first (so the commonest are real
words: "the", "crew", "run", "task"), then made-up words for the long tail. A word of the head
is in most records and one of the tail in a handful, as in real notes. (The corpus this script
used before, 50 words drawn uniformly, put every word of a query in a third of the records:
no text is like that.) Queries are drawn from the same distribution: short ones (6 to 14 words,
a search) and task-length ones (40 to 80 words, what a task's description and expected output
make, which is what a crew's agent recalls with).

1. Recall latency, p50 and p95, at each size: ``Memory.recall`` (the query embedded by the
   offline WordLlama, BM25 over FTS5, an exact dot product over every vector, reciprocal-rank
   fusion, the five records read back), after the first recall has loaded the vectors.
   Goal: p50 at most 20 ms at 100k records. Also as a crew's task recalls: in its agent's
   scope (one of the 7 the records are spread over), 15 records (3 x limit). Beside each, the
   keyword side alone (``crew.search.keywords``), and, at the largest size, the keyword side
   alone on the old 50-word corpus: the worst case its bound is for (every word common).
2. Ingest at each size: records remembered per second (batches of 1,000 through the index,
   each one transaction), and the first recall, which loads every vector into one matrix.
3. Knowledge (``benchmarks/knowledge_figures.py``, also runnable alone): ingest of a 10 MB text
   corpus and a 100-page PDF, and recall@5 on the labelled questions, keywords alone vs hybrid.
"""

from __future__ import annotations

import argparse
import bisect
import functools
import itertools
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from crew.memory import Memory  # noqa: E402
from crew.search import Doc  # noqa: E402
from crew.search.index import DEPTH  # noqa: E402
from crew.search.keywords import BUDGET, keyword_ranking  # noqa: E402

RECALL_GOAL_MS = 20.0
VOCABULARY_SIZE = 50_000
ZIPF_EXPONENT = 1.0
_SYLLABLES = ("ka", "ro", "mi", "tes", "lan", "dor", "vi", "pe", "su", "nax", "bel", "tor", "qui", "zen", "fa", "lo")
_NARROW_TEXT = (
    "client report invoice deploy budget travel flight hotel weather museum coffee tea market python "
    "database schema release review meeting agenda deadline supplier contract price discount shipping "
    "warehouse ticket refund customer support outage latency cache server queue worker retry timeout"
)
_NARROW = _NARROW_TEXT.split()


class Zipf:
    """Words drawn from a Zipf distribution over the docs' words, then made-up ones."""

    def __init__(self, size: int = VOCABULARY_SIZE, exponent: float = ZIPF_EXPONENT) -> None:
        text = " ".join(path.read_text(encoding="utf-8") for path in (ROOT / "docs").glob("*.md")).lower()
        self.words = [word for word, _ in Counter(re.findall(r"[a-z]{2,}", text)).most_common()]
        rng, seen = random.Random(1), set(self.words)
        while len(self.words) < size:
            word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
            if word not in seen:
                seen.add(word)
                self.words.append(word)
        self.cumulative = list(itertools.accumulate(rank**-exponent for rank in range(1, size + 1)))

    def sentence(self, rng: random.Random, shortest: int, longest: int) -> str:
        total = self.cumulative[-1]
        count = rng.randint(shortest, longest)
        picks = (bisect.bisect_left(self.cumulative, rng.random() * total) for _ in range(count))
        return " ".join(self.words[i] for i in picks)


def _narrow(rng: random.Random, shortest: int, longest: int) -> str:
    return " ".join(rng.choice(_NARROW) for _ in range(rng.randint(shortest, longest)))


Sentences = Callable[[random.Random, int, int], str]


def _fill(memory: Memory, count: int, sentences: Sentences) -> float:
    """Remember ``count`` records (through the index, 1,000 a transaction); records per second."""
    rng = random.Random(count)
    started = time.perf_counter()
    for start in range(0, count, 1000):
        batch = [sentences(rng, 8, 40) for _ in range(min(1000, count - start))]
        memory.index.add(
            [Doc(f"r{start + i}", text, f"/crew/bench/agent{(start + i) % 7}") for i, text in enumerate(batch)]
        )
    return count / (time.perf_counter() - started)


def _times(call: Callable[[str], object], queries: list[str]) -> tuple[float, float]:
    """p50 and p95 of ``call`` over ``queries``, in milliseconds."""
    times = []
    for query in queries:
        started = time.perf_counter()
        call(query)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def _keywords(memory: Memory, scope: str = "/", depth: int = DEPTH) -> Callable[[str], object]:
    index = memory.index
    return lambda query: keyword_ranking(index._conn, index.collection, query, depth, scope)


def measure(size: int, queries: int, folder: Path, zipf: Zipf) -> None:
    rng = random.Random(7)
    short = [zipf.sentence(rng, 6, 14) for _ in range(queries)]
    long = [zipf.sentence(rng, 40, 80) for _ in range(queries)]
    kinds = [  # label, queries, scope, limit
        ("short queries", short, "/", 5),
        ("task-length queries", long, "/", 5),
        ("an agent's recall", long, "/crew/bench/agent3", 15),  # as a crew's task asks: its scope, 3 x limit
    ]
    with Memory(folder / f"memory-{size}.db") as memory:
        rate = _fill(memory, size, zipf.sentence)
        started = time.perf_counter()
        memory.recall("warm up the vectors", limit=5)
        first = (time.perf_counter() - started) * 1000
        print(f"{size:>7,} records  ingest {rate:,.0f} records/s, first recall (loads the vectors) {first:.0f} ms")
        for kind, asked, scope, limit in kinds:
            p50, p95 = _times(functools.partial(memory.recall, limit=limit, scope=scope), asked)
            k50, _ = _times(_keywords(memory, scope, max(DEPTH, 4 * limit)), asked)
            goal = ""
            if size >= 100_000:
                verdict = "ok" if p50 <= RECALL_GOAL_MS else "OVER GOAL"
                goal = f"  (goal: p50 <= {RECALL_GOAL_MS:.0f} ms) {verdict}"
            print(f"  {kind:<20} recall p50 {p50:6.2f} ms  p95 {p95:6.2f} ms  (keywords alone p50 {k50:5.2f} ms){goal}")


def worst_case(size: int, queries: int, folder: Path) -> None:
    """The keyword side on the 50-word corpus (keywords only: no vectors to fill)."""
    rng = random.Random(7)
    with Memory(folder / f"narrow-{size}.db", embedder="none") as memory:
        _fill(memory, size, _narrow)
        p50, p95 = _times(_keywords(memory), [_narrow(rng, 6, 6) for _ in range(queries)])
    print(f"{size:>7,} records of a 50-word vocabulary, keywords alone: p50 {p50:.2f} ms  p95 {p95:.2f} ms")
    if size // 3 > BUDGET:
        print(f"    (each word in a third of the records, over {BUDGET:,}: none ranks by BM25, newest first)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--no-knowledge", action="store_true", help="only the memory figures")
    args = parser.parse_args()
    zipf = Zipf()
    print(
        f"memory recall (offline WordLlama embedder, hybrid FTS5 + exact vectors), one process; records of a "
        f"{len(zipf.words):,}-word Zipf vocabulary (docs/*.md's words first)"
    )
    with tempfile.TemporaryDirectory(prefix="crew-memory-bench-") as tmp:
        for size in args.sizes:
            measure(size, args.queries, Path(tmp), zipf)
        worst_case(max(args.sizes), args.queries, Path(tmp))
    if not args.no_knowledge:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from knowledge_figures import main as knowledge_figures

        print()
        knowledge_figures()


if __name__ == "__main__":
    main()
