"""Calls seen before skip validation: same answers as validating every time, never a shortcut's own.

A repeated call of a cached tool takes the executor's fastest path (``crew.tools.cache``):
its raw arguments were validated once, so the validated arguments and the cache key are
reused. Everything observable must stay what validating again would give.
"""

from __future__ import annotations

import threading
from typing import Annotated, Any

from pydantic import BeforeValidator

from crew.common.events import bus
from crew.common.secrets import register
from crew.tools import ToolCall, ToolExecutor, tool


def _split(value: Any) -> Any:
    return value.split() if isinstance(value, str) else value


Words = Annotated[list[str], BeforeValidator(_split)]
"""Text validated into a list: a mutable value made from a flat scalar argument."""

VALIDATED: list[str] = []


def _counted(value: Any) -> Any:
    VALIDATED.append(value)
    return value


Counted = Annotated[str, BeforeValidator(_counted)]
"""A text whose validations are counted."""


def test_equal_values_of_different_types_are_never_taken_for_one_another() -> None:
    @tool
    def echo(x: int | bool | float) -> str:
        """Say what arrived."""
        return f"{type(x).__name__} {x}"

    executor = ToolExecutor([echo])
    calls = [{"x": 1}, {"x": True}, {"x": 1.0}] * 3  # equal (and hashing alike) in Python
    contents = [executor.execute({"name": "echo", "args": args}).content for args in calls]
    assert contents == ["int 1", "bool True", "float 1.0"] * 3
    stats = executor.stats["echo"]
    assert (stats.runs, stats.cache_hits) == (3, 6)


def test_a_seen_call_whose_cache_entry_is_gone_runs_again_with_its_validated_arguments() -> None:
    runs: list[tuple[int, int]] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        runs.append((a, b))
        return a + b

    executor = ToolExecutor([add])
    call = ToolCall(name="add", args={"a": "2", "b": 3})  # "2" is coerced by validation
    first, hit = executor.execute(call), executor.execute(call)
    executor.cache.clear()  # type: ignore[union-attr]
    again = executor.execute(call)
    assert [first.raw, hit.raw, again.raw] == [5, 5, 5]
    assert [first.cached, hit.cached, again.cached] == [False, True, False]
    assert runs == [(2, 3), (2, 3)]  # validated ints both times, never the raw "2"


def test_invented_arguments_are_announced_on_every_repeat() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    seen: list = []
    unsubscribe = bus.subscribe(seen.append)
    try:
        executor = ToolExecutor([add])
        for _ in range(3):
            assert executor.execute({"name": "add", "args": {"a": 1, "b": 2, "c": 9}}).raw == 3
    finally:
        unsubscribe()
    dropped = [e for e in seen if e.type == "tool.args_dropped"]
    hits = [e for e in seen if e.type == "tool.call" and e.data["cached"]]
    assert len(dropped) == 3 and len(hits) == 2
    assert all(e.data["args"] == {"a": 1, "b": 2} for e in hits)


def test_a_secret_registered_after_a_hit_is_scrubbed_from_the_next_hit() -> None:
    token = "recall-secret-value-0123456789"

    @tool
    def leak(n: int) -> str:
        """Return a text with a token in it."""
        return f"token={token} n={n}"

    executor = ToolExecutor([leak])
    call = {"name": "leak", "args": {"n": 1}}
    executor.execute(call)
    assert token in executor.execute(call).content  # not a secret yet
    register(token)
    assert executor.execute(call).content == "token=*** n=1"


def test_hits_from_many_threads_are_all_counted() -> None:
    @tool
    def square(n: int) -> int:
        """Square."""
        return n * n

    executor = ToolExecutor([square])
    threads, per_thread = 16, 500
    barrier = threading.Barrier(threads)
    results: list[list[int]] = [[] for _ in range(threads)]

    def worker(i: int) -> None:
        barrier.wait()
        for j in range(per_thread):
            results[i].append(executor.execute({"name": "square", "args": {"n": j % 7}}).raw)

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    assert all(r == [(j % 7) ** 2 for j in range(per_thread)] for r in results)
    stats = executor.stats["square"]
    assert stats.calls == threads * per_thread
    assert stats.runs == 7 and stats.cache_hits == threads * per_thread - 7


def test_arguments_marshal_cannot_write_exactly_are_validated_every_time() -> None:
    class Text(str):
        """A str subclass: equal to its text, but not what a model sends."""

    runs: list[str] = []

    @tool
    def shout(text: str) -> str:
        """Shout."""
        runs.append(text)
        return text.upper()

    executor = ToolExecutor([shout])
    for args in ({"text": Text("hi")}, {"text": Text("hi")}, {"text": "hi"}, {"text": "hi"}):
        assert executor.execute({"name": "shout", "args": args}).content == "HI"
    # one canonical key for all four: the first run is shared, whichever way the arguments came
    assert runs == ["hi"] and executor.stats["shout"].cache_hits == 3
    assert len(executor._recall.seen) == 1  # only the plain str arguments were kept


def test_nested_and_long_arguments_are_served_from_the_cache_without_being_kept() -> None:
    @tool
    def total(values: list[int], label: str = "") -> str:
        """Sum some numbers."""
        return f"{label}{sum(values)}"

    executor = ToolExecutor([total])
    nested = {"values": [1, 2, 3]}
    long = {"values": [1], "label": "x" * 5000}
    assert [executor.execute({"name": "total", "args": nested}).content for _ in range(3)] == ["6"] * 3
    assert [executor.execute({"name": "total", "args": long}).cached for _ in range(3)] == [False, True, True]
    assert executor._recall.seen == {}  # a list, and a text past the table's byte bound, are never kept
    assert executor.stats["total"].cache_hits == 4


def test_a_validator_that_makes_a_mutable_value_gives_every_run_its_own() -> None:
    seen: list[list[str]] = []

    @tool
    def words(text: Words) -> str:
        """Count words, spoiling the list it was given."""
        seen.append(list(text))
        text.append("spoiled")
        return str(len(text) - 1)

    executor = ToolExecutor([words])
    call = {"name": "words", "args": {"text": "a b c"}}
    for _ in range(3):
        assert executor.execute(call).content == "3"
        executor.cache.clear()  # type: ignore[union-attr]  # every call runs the tool
    assert seen == [["a", "b", "c"]] * 3  # never the list a previous run spoiled
    assert executor._recall.seen == {}


def test_the_same_arguments_to_two_tools_are_kept_for_each() -> None:
    @tool
    def upper(text: str) -> str:
        """Upper-case."""
        return text.upper()

    @tool
    def lower(text: str) -> str:
        """Lower-case."""
        return text.lower()

    executor = ToolExecutor([upper, lower])
    for _ in range(3):
        assert executor.execute({"name": "upper", "args": {"text": "Ab"}}).content == "AB"
        assert executor.execute({"name": "lower", "args": {"text": "Ab"}}).content == "ab"
    assert len(executor._recall.seen) == 2
    assert (executor.stats["upper"].cache_hits, executor.stats["lower"].cache_hits) == (2, 2)


def test_a_repeated_call_is_served_without_validating_again() -> None:
    @tool
    def echo(text: Counted) -> str:
        """Say it back."""
        return text

    VALIDATED.clear()
    executor = ToolExecutor([echo])
    results = [executor.execute({"name": "echo", "args": {"text": "hi"}}) for _ in range(4)]
    assert [r.content for r in results] == ["hi"] * 4 and [r.cached for r in results] == [False, True, True, True]
    assert VALIDATED == ["hi"]  # validated once; the hits were recalled by their raw arguments
    executor.cache.clear()  # type: ignore[union-attr]
    assert executor.execute({"name": "echo", "args": {"text": "hi"}}).cached is False
    assert VALIDATED == ["hi"]  # a recalled miss runs with the arguments validated the first time
