"""ToolExecutor cache: keys, cache_function, hits and usage slots, single flight, backends."""

from __future__ import annotations

import asyncio
import datetime
import json
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from pydantic import BaseModel

from crew.common.events import bus
from crew.tools import RunContext, ToolExecutor, never_cache, tool
from crew.tools.cache import CacheBackend, InMemoryCache, SQLiteCache, cache_key


class Reading(BaseModel):
    sensor: str
    value: float


class Opaque:
    def __str__(self) -> str:
        return "<opaque thing>"


def counting_add():
    runs: list[tuple[int, int]] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        runs.append((a, b))
        return a + b

    return add, runs


def test_hit_returns_the_stored_result_without_running_the_tool():
    add, runs = counting_add()
    executor = ToolExecutor([add])
    first = executor.execute({"name": "add", "args": {"a": 1, "b": 2}})
    # same validated arguments: other key order, coercible types, an invented extra
    for args in ({"b": 2, "a": 1}, {"a": "1", "b": 2.0}, {"a": 1, "b": 2, "note": "x"}):
        hit = executor.execute({"name": "add", "args": args, "id": "again"})
        assert hit.cached and hit.content == "3" and hit.raw == 3 and hit.tool_call_id == "again"
    assert not first.cached
    assert runs == [(1, 2)]
    assert executor.execute({"name": "add", "args": {"a": 2, "b": 1}}).cached is False
    assert executor.stats["add"].cache_hits == 3


def test_cache_hits_do_not_consume_usage_slots():
    runs = []

    @tool(max_usage_count=2)
    def fetch(url: str) -> str:
        """Fetch a page."""
        runs.append(url)
        return f"<html>{url}</html>"

    executor = ToolExecutor([fetch])
    for _ in range(5):
        assert executor.execute({"name": "fetch", "args": {"url": "a"}}).status == "success"
    assert executor.execute({"name": "fetch", "args": {"url": "b"}}).status == "success"
    refused = executor.execute({"name": "fetch", "args": {"url": "c"}})
    assert refused.refused and refused.status == "error"
    assert refused.content == "Tool 'fetch' has reached its usage limit of 2 times and cannot be used anymore."
    assert executor.execute({"name": "fetch", "args": {"url": "a"}}).cached  # still served past the limit
    assert runs == ["a", "b"]
    assert executor.usage("fetch") == 2


def test_cache_function_decides_what_is_stored():
    seen = []

    def only_even(arguments, result):
        seen.append((arguments, result))
        return result % 2 == 0

    runs = []

    @tool(cache_function=only_even)
    def square(n: int) -> int:
        """Square n."""
        runs.append(n)
        return n * n

    executor = ToolExecutor([square])
    for n in (2, 2, 3, 3):
        executor.execute({"name": "square", "args": {"n": n}})
    assert runs == [2, 3, 3]  # 4 stored, 9 (odd) never stored
    assert seen == [({"n": 2}, 4), ({"n": 3}, 9), ({"n": 3}, 9)]


def test_a_raising_cache_function_keeps_the_result_but_stores_nothing():
    def broken(arguments, result):
        raise RuntimeError("predicate bug")

    @tool(cache_function=broken)
    def echo(text: str) -> str:
        """Echo."""
        return text

    executor = ToolExecutor([echo])
    assert executor.execute({"name": "echo", "args": {"text": "a"}}).content == "a"
    assert not executor.execute({"name": "echo", "args": {"text": "a"}}).cached


def test_the_default_cache_is_in_memory_and_lives_for_one_executor():
    add, runs = counting_add()
    first_run = ToolExecutor([add])  # one executor per crew run
    assert isinstance(first_run.cache, InMemoryCache)
    assert [first_run.execute({"name": "add", "args": {"a": 1, "b": 2}}).cached for _ in range(2)] == [False, True]
    next_run = ToolExecutor([add])
    assert next_run.execute({"name": "add", "args": {"a": 1, "b": 2}}).cached is False  # a new run starts empty
    assert runs == [(1, 2), (1, 2)]


def test_cache_false_always_runs():
    add, runs = counting_add()
    executor = ToolExecutor([add], cache=False)
    results = [executor.execute({"name": "add", "args": {"a": 1, "b": 1}}) for _ in range(3)]
    assert [r.cached for r in results] == [False] * 3
    assert len(runs) == 3


def test_arguments_without_a_json_form_are_never_cached():
    runs = []

    @tool
    def inspect_value(value: object) -> str:
        """Describe a value."""
        runs.append(value)
        return type(value).__name__

    executor = ToolExecutor([inspect_value])
    thing = Opaque()
    assert executor.execute({"name": "inspect_value", "args": {"value": thing}}).content == "Opaque"
    assert not executor.execute({"name": "inspect_value", "args": {"value": thing}}).cached
    assert len(runs) == 2
    assert executor.execute({"name": "inspect_value", "args": {"value": datetime.date(2024, 1, 2)}}).content == "date"
    assert executor.execute({"name": "inspect_value", "args": {"value": datetime.date(2024, 1, 2)}}).cached


def test_single_flight_across_64_threads_runs_the_tool_once():
    runs = []
    started = threading.Event()
    release = threading.Event()

    @tool
    def slow(q: str) -> str:
        """A slow lookup."""
        runs.append(q)
        started.set()
        assert release.wait(10)
        return q.upper()

    executor = ToolExecutor([slow])
    results = [None] * 64
    barrier = threading.Barrier(64)

    def worker(i: int) -> None:
        barrier.wait()
        results[i] = executor.execute({"name": "slow", "args": {"q": "same"}, "id": f"c{i}"})

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(64)]
    for thread in threads:
        thread.start()
    assert started.wait(10)
    time.sleep(0.05)  # let the other threads reach the in-flight call while it still runs
    release.set()
    for thread in threads:
        thread.join(10)
    assert runs == ["same"]
    assert all(r.content == "SAME" and r.status == "success" for r in results)
    assert [r.tool_call_id for r in results] == [f"c{i}" for i in range(64)]
    assert sum(not r.cached for r in results) == 1
    stats = executor.stats["slow"]
    assert (stats.calls, stats.runs, stats.cache_hits) == (64, 1, 63)


async def test_single_flight_across_asyncio_tasks():
    runs = []

    @tool
    async def slow(q: str) -> str:
        """A slow async lookup."""
        runs.append(q)
        await asyncio.sleep(0.05)
        return q * 2

    executor = ToolExecutor([slow])
    results = await asyncio.gather(*(executor.aexecute({"name": "slow", "args": {"q": "ab"}}) for _ in range(50)))
    assert runs == ["ab"]
    assert {r.content for r in results} == {"abab"}
    assert executor.stats["slow"].cache_hits == 49


def test_never_cache_tools_skip_the_cache_and_the_wait_so_identical_calls_overlap():
    """8 identical calls meet inside the tool at once: none waits for another."""
    inside = threading.Barrier(8, timeout=10)

    @tool(cache_function=never_cache)
    def notify(channel: str) -> str:
        """Send a notification (a side effect: every call must run)."""
        inside.wait()
        return f"sent to {channel}"

    executor = ToolExecutor([notify])
    results = executor.execute_many([{"name": "notify", "args": {"channel": "ops"}}] * 8)
    assert [r.content for r in results] == ["sent to ops"] * 8
    stats = executor.stats["notify"]
    assert (stats.runs, stats.cache_hits) == (8, 0)


async def test_a_cancelled_waiter_does_not_disturb_the_others():
    gate = asyncio.Event()

    @tool
    async def slow(q: str) -> str:
        """Wait for the gate."""
        await gate.wait()
        return q

    executor = ToolExecutor([slow])
    leader = asyncio.ensure_future(executor.aexecute({"name": "slow", "args": {"q": "x"}}))
    await asyncio.sleep(0.01)
    doomed = asyncio.ensure_future(executor.aexecute({"name": "slow", "args": {"q": "x"}}))
    patient = asyncio.ensure_future(executor.aexecute({"name": "slow", "args": {"q": "x"}}))
    await asyncio.sleep(0.01)
    doomed.cancel()
    gate.set()
    assert (await leader).content == "x"
    assert (await patient).cached
    assert doomed.cancelled()


def test_waiters_run_themselves_when_the_leader_stored_nothing():
    runs = []
    release = threading.Event()

    @tool(cache_function=lambda arguments, result: False)
    def roll(sides: int) -> int:
        """Roll a die (never cached)."""
        runs.append(sides)
        release.wait(10)
        return len(runs)

    executor = ToolExecutor([roll])
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(executor.execute({"name": "roll", "args": {"sides": 6}})))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    time.sleep(0.05)
    release.set()
    for thread in threads:
        thread.join(10)
    assert len(runs) == 8
    assert not any(r.cached for r in results)


def test_waiters_of_a_failing_leader_run_themselves_once_each():
    runs = []
    release = threading.Event()

    @tool
    def fails(x: int) -> int:
        """Always fails."""
        runs.append(x)
        release.wait(10)
        raise OSError("disk full")

    executor = ToolExecutor([fails])
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(executor.execute({"name": "fails", "args": {"x": 1}})))
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    time.sleep(0.05)
    release.set()
    for thread in threads:
        thread.join(10)
    assert len(runs) == 6
    assert all(r.content == "OSError: disk full" for r in results)


def test_sqlite_cache_stores_json_and_expires(tmp_path):
    cache = SQLiteCache(tmp_path / "c.db", ttl=0.2)
    assert isinstance(cache, CacheBackend) and isinstance(InMemoryCache(), CacheBackend)
    cache.set("k", {"content": "t", "raw": (1, 2), "model": Reading(sensor="s", value=1.5), "other": Opaque()})
    assert cache.get("k") == (
        True,
        {"content": "t", "raw": [1, 2], "model": {"sensor": "s", "value": 1.5}, "other": "<opaque thing>"},
    )
    assert cache.get("missing") == (False, None)
    time.sleep(0.25)
    assert cache.get("k") == (False, None)
    cache.set("k2", 1)
    cache.clear()
    assert cache.get("k2") == (False, None)
    cache.close()


def test_executor_with_sqlite_cache_serves_model_results_as_json(tmp_path):
    runs = []

    @tool
    def read(sensor: str) -> Reading:
        """Read a sensor."""
        runs.append(sensor)
        return Reading(sensor=sensor, value=20.5)

    with SQLiteCache(tmp_path / "cache.db") as cache:
        executor = ToolExecutor([read], cache=cache)
        first = executor.execute({"name": "read", "args": {"sensor": "t1"}})
        second = ToolExecutor([read], cache=cache).execute({"name": "read", "args": {"sensor": "t1"}})
    assert second.cached and second.content == first.content == '{"sensor":"t1","value":20.5}'
    assert second.raw == {"sensor": "t1", "value": 20.5}
    assert runs == ["t1"]


SCRIPT = textwrap.dedent("""
    import json, sys
    from crew.tools import ToolExecutor, tool
    from crew.tools.cache import SQLiteCache

    @tool
    def lookup(word: str) -> dict:
        '''Look a word up.'''
        with open(sys.argv[2], "a") as log:
            log.write(word + "\\n")
        return {"word": word, "length": len(word)}

    with SQLiteCache(sys.argv[1], ttl=3600) as cache:
        result = ToolExecutor([lookup], cache=cache).execute({"name": "lookup", "args": {"word": "crew"}})
    print(json.dumps({"cached": result.cached, "content": result.content, "raw": result.raw}))
""")


def test_sqlite_cache_survives_a_new_process(tmp_path):
    script = tmp_path / "run_lookup.py"
    script.write_text(SCRIPT)
    db, log = tmp_path / "shared.db", tmp_path / "runs.log"
    outputs = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, str(script), str(db), str(log)], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads(done.stdout))
    assert [o["cached"] for o in outputs] == [False, True]
    assert outputs[0]["content"] == outputs[1]["content"] == '{"word": "crew", "length": 4}'
    assert outputs[1]["raw"] == {"word": "crew", "length": 4}
    assert log.read_text() == "crew\n"  # the second process never ran the tool


def test_sqlite_cache_stores_bytes_results_as_text(tmp_path):
    @tool
    def blob() -> bytes:
        """Raw bytes, not all of them UTF-8."""
        return b"caf\xc3\xa9 \xff"

    with SQLiteCache(tmp_path / "missing" / "dir" / "c.db") as cache:  # parent folders are created
        executor = ToolExecutor([blob], cache=cache)
        first = executor.execute({"name": "blob", "args": {}})
        again = executor.execute({"name": "blob", "args": {}})
    assert (first.status, first.content, first.raw) == ("success", "café \ufffd", b"caf\xc3\xa9 \xff")
    assert (again.cached, again.content, again.raw) == (True, "café \ufffd", "café \ufffd")


def test_a_failing_cache_backend_never_fails_the_call(tmp_path):
    add, runs = counting_add()
    cache = SQLiteCache(tmp_path / "c.db")
    executor = ToolExecutor([add], cache=cache)
    cache.close()  # every get and set now raises sqlite3.ProgrammingError
    seen = []
    unsubscribe = bus.subscribe(seen.append)
    try:
        results = [executor.execute({"name": "add", "args": {"a": 1, "b": 2}}) for _ in range(2)]
    finally:
        unsubscribe()
    assert [(r.status, r.content, r.cached) for r in results] == [("success", "3", False)] * 2
    assert len(runs) == 2
    errors = [e.data for e in seen if e.type == "tool.cache.error"]
    assert [e["operation"] for e in errors] == ["get", "get", "set"] * 2
    assert "closed database" in errors[0]["error"]


def test_unusable_sqlite_cache_paths_are_named(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError, match=r"cannot open the SQLite tool cache at .*file"):
        SQLiteCache(tmp_path / "file" / "c.db")
    with pytest.raises(OSError, match=f"cannot open the SQLite tool cache at {tmp_path}"):
        SQLiteCache(tmp_path)  # a directory


class ListCache:
    """A user-written backend: anything with get/set/clear works."""

    def __init__(self) -> None:
        self.items: list[tuple[str, object]] = []

    def get(self, key):
        for stored_key, value in self.items:
            if stored_key == key:
                return True, value
        return False, None

    def set(self, key, value):
        self.items.append((key, value))

    def clear(self):
        self.items.clear()


def test_custom_backend_and_the_canonical_key():
    add, runs = counting_add()
    backend = ListCache()
    executor = ToolExecutor([add], cache=backend)
    executor.execute({"name": "add", "args": {"b": 2, "a": 1}})
    assert executor.execute({"name": "add", "args": {"a": 1, "b": 2}}).cached
    assert [key for key, _ in backend.items] == ['add:{"a":1,"b":2}']
    assert len(runs) == 1


def test_cache_key_is_canonical_and_leaves_injected_context_out():
    assert cache_key("t", {"b": [1, {"z": 1, "y": "é"}], "a": None}) == 't:{"a":null,"b":[1,{"y":"é","z":1}]}'
    assert cache_key("t", {"q": 1, "ctx": RunContext(task="x")}, frozenset({"ctx"})) == 't:{"q":1}'
    assert cache_key("t", {"when": datetime.date(2024, 5, 6)}) == 't:{"when":"2024-05-06"}'
    assert cache_key("t", {"thing": Opaque()}) is None
