"""What a tool call costs on top of the function it wraps.

Run: python benchmarks/tool_overhead.py

Each row is (label, goal in ns or None, fn); fn is called many times and the best of
several repeats is printed as nanoseconds per call beside its goal. For scale on the
reference 2-core machine: a pydantic-validated plain call costs about 2.4 µs, LangChain's
``invoke`` about 300 µs (it re-reads the signature on every call), CrewAI's agent tool
path about 1.2 ms uncached and 0.7 ms on a cache hit.
"""

from __future__ import annotations

import asyncio
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pydantic import validate_call

from crew.tools import tool


def add_plain(a: int, b: int) -> int:
    return a + b


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


add_validated = validate_call(add_plain)

Row = tuple[str, "float | None", Callable[[], object]]

ROWS: list[Row] = [
    ("plain function call", None, lambda: add_plain(1, 2)),
    ("pydantic validate_call (for scale)", None, lambda: add_validated(1, 2)),
    ("tool.run(a=1, b=2)", 8_000, lambda: add.run(a=1, b=2)),
    ("tool.invoke({'a': 1, 'b': 2})", None, lambda: add.invoke({"a": 1, "b": 2})),
]
# Executor rows are appended below this line by the executor's owner (same Row shape).

from crew.tools import ToolCall, ToolExecutor  # noqa: E402

_CALL = ToolCall(name="add", args={"a": 1, "b": 2}, id="call_bench")
_hits = ToolExecutor([add])
_hits.execute(_CALL)
_misses = ToolExecutor([add])
_uncached = ToolExecutor([add], cache=False)
_loop = asyncio.new_event_loop()


def _miss() -> object:
    _misses.cache.clear()  # a dict clear (~50 ns): every call misses, runs add and stores its result
    return _misses.execute(_CALL)


ROWS += [
    ("executor.execute, runs the tool (cache miss+store)", 20_000, _miss),
    ("executor.execute, runs the tool (cache=False)", None, lambda: _uncached.execute(_CALL)),
    ("executor.execute, cache hit", 8_000, lambda: _hits.execute(_CALL)),
    ("await executor.aexecute, cache hit", None, lambda: _loop.run_until_complete(_hits.aexecute(_CALL))),
    (
        "await executor.aexecute, runs add in a worker thread",
        None,
        lambda: _loop.run_until_complete(_uncached.aexecute(_CALL)),
    ),
]


def measure(fn: Callable[[], object], *, repeats: int = 7) -> float:
    """Best-of-``repeats`` nanoseconds per call; each repeat runs for at least 0.2 s (timeit's autorange)."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeats, number=number)) / number * 1e9


def main(rows: list[Row] = ROWS) -> int:
    width = max(len(label) for label, _, _ in rows)
    print(f"{'call':<{width}}  {'ns/call':>10}  {'goal':>10}  verdict")
    failed = 0
    for label, goal, fn in rows:
        ns = measure(fn)
        if goal is None:
            verdict, goal_text = "", "-"
        else:
            ok = ns < goal
            failed += not ok
            verdict, goal_text = ("ok" if ok else "MISSED"), f"< {goal:,.0f}"
        print(f"{label:<{width}}  {ns:>10,.0f}  {goal_text:>10}  {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
