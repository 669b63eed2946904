"""The least a cache hit can cost in Python: the executor's own pieces, called in a row.

Run: python benchmarks/hit_floor.py

``tool_overhead.py`` asks a cache hit for at most 2x pydantic's ``validate_call(add)(1, 2)``.
This script measures the lower bound of a hit with the executor's semantics kept, to say
whether that goal is reachable by rearranging Python at all: one function doing only what
a hit must do (resolve the name, the raw key, the cache read, count it under the lock, ask
the event bus whether anyone listens, build the result with its duration), through the
executor's own objects (its registry, recall table, cache, counters and ``build_result``)
with every step inlined, no pipeline frames between them. Each piece is timed alone too.
Printed as ratios to the floor measured beside each figure.
"""

from __future__ import annotations

import sys
import threading
from marshal import dumps
from pathlib import Path
from time import perf_counter
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tool_overhead import FLOOR, ROWS, beside_floor

from crew.common.events import bus
from crew.common.secrets import generation
from crew.tools import ToolCall, ToolExecutor, tool
from crew.tools.execution.call import build_result
from crew.tools.messages import ToolResult


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


CALL = ToolCall(name="add", args={"a": 1, "b": 2}, id="call_bench")
EXECUTOR = ToolExecutor([add])
EXECUTOR.execute(CALL)
EXECUTOR.execute(CALL)  # seen: the recall table holds it
LOOKUP = EXECUTOR._registry.lookup
SEEN = EXECUTOR._recall.seen
CACHE = EXECUTOR.cache
LOCK: threading.Lock = EXECUTOR._lock


def inlined_hit(call: ToolCall) -> ToolResult | None:
    start = perf_counter()
    requested, args, call_id = call.name, call.args, call.id
    tool_, name, _ = LOOKUP[requested]
    seen = SEEN.get(dumps((id(tool_), args), 2))
    if seen is None or seen.tool is not tool_:
        return None
    hit, value = CACHE.get(seen.key)  # type: ignore[union-attr]
    if not hit:
        return None
    kept = seen.hit
    if kept is None or kept[0] is not value or kept[1] != generation():
        kept = seen.remember(value)
    stats = seen.stats
    LOCK.acquire()
    stats.calls += 1
    stats.cache_hits += 1
    LOCK.release()
    duration = perf_counter() - start
    if bus.enabled("tool.call"):
        pass  # nobody listens here; the executor builds the event at this point
    as_answer = tool_.result_as_answer
    return build_result(kept[2], call_id, name, "success", kept[3], kept[4], as_answer, True, False, duration)


def _locked() -> None:
    LOCK.acquire()
    LOCK.release()


PIECES: list[tuple[str, Any]] = [
    ("executor.execute, cache hit (the pipeline)", lambda: EXECUTOR.execute(CALL)),
    ("all of a hit's steps inlined in one function", lambda: inlined_hit(CALL)),
    ("  reading name, args, id off the ToolCall", lambda: (CALL.name, CALL.args, CALL.id)),
    ("  the raw key (marshal.dumps)", lambda: dumps((id(add), CALL.args), 2)),
    ("  the cache read", lambda: CACHE.get("k")),  # type: ignore[union-attr]
    ("  the lock taken and given back", _locked),
    ("  asking the bus whether anyone listens", lambda: bus.enabled("tool.call")),
    ("  building the ToolResult", lambda: build_result("3", "c", "add", "success", None, 3, False, True, False, 0.1)),
    ("  one clock read", perf_counter),
]


def main() -> int:
    assert inlined_hit(CALL) is not None
    floor_fn = dict((label, fn) for label, _, fn in ROWS)[FLOOR]
    width = max(len(label) for label, _ in PIECES)
    print(f"{'piece':<{width}}  {'ns/call':>8}  x floor")
    for label, fn in PIECES:
        ns, floor = beside_floor(fn, floor_fn)
        print(f"{label:<{width}}  {ns:>8,.0f}  {ns / floor:>6.2f}x")
    print("goal of tool_overhead.py for a hit: <= 2x the floor")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
