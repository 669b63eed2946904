"""The tool cache: where results are kept between identical calls, and how the executor uses it.

A backend only maps string keys to JSON-like values; what a key means (tool name +
canonical arguments) and what is worth storing are the executor's business. The
in-memory backend lives as long as its executor (one run); the SQLite backend
outlives processes, so it stores JSON only — never pickle, which would let anyone
able to write the cache file run code in every process that reads it.

How the executor uses a backend (``read``, ``store``, ``worth_storing``), and the calls it has
seen (``Recall``), follow the backends.

An unreadable backend is a miss, one that cannot store (disk full, locked) loses only the
entry, and a tool's ``cache_function`` that raises stores nothing. Each failure is
announced (``tool.cache.error``, ``tool.cache_function.error``) instead of raised.

The guards (``read``, ``store``, ``worth_storing``) take the call's context and the
executor's run id, and combine them (the event's run id) only when something fails:
these run on every cache miss.

Calls seen before (``Recall``): raw arguments already validated, so a repeated call skips validation.

A model repeats calls (the same search, the same lookup), and a repeated call of a cached
tool is the executor's hottest path. Validating the same raw arguments again gives the same
validated arguments and the same canonical cache key, so both are kept per tool, keyed by
the raw arguments' ``marshal`` bytes: one C call that tells types apart (``1``, ``1.0`` and
``True`` are equal in Python but not to a validator) and refuses what it cannot write
exactly (subclasses, objects). Format 2 has no back-references, so equal arguments always
give equal bytes.

Entries are made only for flat arguments of JSON scalars whose validated values are
immutable (what models send most; the tool gets a copy of the dict, never shared values),
for calls whose result may come from the cache and whose arguments dropped nothing (so no
``tool.args_dropped`` event is skipped). The table is bounded in entries and in bytes.

What a hit hands back (its text scrubbed of secrets) is worked out once per cached value
and secrets generation (``crew.common.secrets.generation``), not on every hit.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime, timedelta
from datetime import time as clock
from decimal import Decimal
from enum import Enum
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from marshal import dumps
from os import PathLike
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable
from uuid import UUID

from pydantic_core import PydanticSerializationError, to_jsonable_python

from crew.common.events import bus
from crew.common.secrets import generation, scrub
from crew.tools.base import BaseTool
from crew.tools.execution.stats import ToolStats
from crew.tools.messages import RunContext, jsonable

if TYPE_CHECKING:
    import sqlite3

_MISS: tuple[bool, Any] = (False, None)
_ABSENT = object()
# The C encoder built once: json.dumps(sort_keys=True, separators=(",", ":")) rebuilds it
# on every call, which would more than double the cost of a cache hit.
_key_encoder = cast(
    "Callable[[Any, int], Iterable[str]]",
    c_make_encoder(None, to_jsonable_python, encode_basestring, None, ":", ",", True, False, True),
)


def cache_key(tool_name: str, args: dict[str, Any], injected: frozenset[str] = frozenset()) -> str | None:
    """``name:`` + canonical JSON (sorted keys, compact) of the validated arguments.

    Runtime-injected parameters are left out: who calls must not change what a call
    means. None when an argument has no JSON form: such calls are never cached.
    """
    if injected and not injected.isdisjoint(args):
        args = {k: v for k, v in args.items() if k not in injected}
    try:
        return tool_name + ":" + "".join(_key_encoder(args, 0))
    except (TypeError, ValueError, PydanticSerializationError):
        return None


@runtime_checkable
class CacheBackend(Protocol):
    """The three operations the executor needs; implementations must be thread-safe."""

    def get(self, key: str) -> tuple[bool, Any]:
        """Return ``(True, value)`` for a stored key, ``(False, None)`` otherwise."""
        ...

    def set(self, key: str, value: Any) -> None: ...

    def clear(self) -> None: ...


class InMemoryCache:
    """A dict: values are kept as the Python objects the executor stored.

    Single dict operations are atomic under the GIL, so no lock is needed and a hit
    costs one lookup — this is the hot path of every repeated tool call.
    """

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}

    def get(self, key: str) -> tuple[bool, Any]:
        value = self._data.get(key, _ABSENT)  # no KeyError raised and caught on a miss: a third of its cost
        return _MISS if value is _ABSENT else (True, value)

    def set(self, key: str, value: Any) -> None:
        self._data[key] = value

    def clear(self) -> None:
        self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


def _create_table(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS tool_cache (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at REAL)")
    conn.execute("CREATE INDEX IF NOT EXISTS tool_cache_expiry ON tool_cache (expires_at)")


class SQLiteCache:
    """A persistent cache in one SQLite file, shared by runs and processes.

    Values are stored as JSON text: pydantic models, dates and the like in their
    JSON form, bytes as UTF-8 text, anything JSON cannot hold as its ``str()`` text,
    and tuples come back as lists.
    ``ttl`` is in seconds; expired rows read as misses and are purged on write.
    WAL mode lets readers in other processes proceed while one process writes.
    """

    def __init__(self, path: str | PathLike[str], ttl: float | None = None) -> None:
        if ttl is not None and ttl <= 0:
            raise ValueError(f"SQLiteCache ttl must be positive seconds or None, got {ttl!r}")
        import sqlite3  # only users of the persistent cache pay for loading it

        from crew.common.sqlite_files import open_shared

        self.path = Path(path)
        self.ttl = ttl
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn: sqlite3.Connection = open_shared(self.path, _create_table)
        except (OSError, sqlite3.Error) as exc:
            raise OSError(f"cannot open the SQLite tool cache at {self.path}: {exc}") from exc

    def get(self, key: str) -> tuple[bool, Any]:
        with self._lock:
            row = self._conn.execute(
                "SELECT value FROM tool_cache WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)",
                (key, time.time()),
            ).fetchone()
        if row is None:
            return _MISS
        return True, json.loads(row[0])

    def set(self, key: str, value: Any) -> None:
        text = json.dumps(value, ensure_ascii=False, default=jsonable)
        now = time.time()
        expires_at = None if self.ttl is None else now + self.ttl
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO tool_cache (key, value, expires_at) VALUES (?, ?, ?)",
                (key, text, expires_at),
            )
            self._conn.execute("DELETE FROM tool_cache WHERE expires_at IS NOT NULL AND expires_at <= ?", (now,))

    def clear(self) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM tool_cache")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SQLiteCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def as_backend(cache: bool | CacheBackend | None) -> CacheBackend | None:
    """An executor's ``cache=``: True (in memory), False or None (none), or a backend of one's own."""
    if cache is True:
        return InMemoryCache()
    if cache is False or cache is None:
        return None
    if isinstance(cache, CacheBackend):  # pyright: ignore[reportUnnecessaryIsInstance] - callers outside typed code pass anything
        return cache
    raise TypeError(
        "ToolExecutor(cache=...) takes True (in memory), False, or a backend with get/set/clear "
        f"such as SQLiteCache, got {type(cache).__name__}"
    )


# -- how the executor reads and stores, and the calls it has seen --------------------------


def read(cache: CacheBackend, key: str, tool: str, context: RunContext | None, run_id: str | None) -> tuple[bool, Any]:
    try:
        return cache.get(key)
    except Exception as exc:  # noqa: BLE001 - an unreadable cache is a miss, not a crash
        _cache_error(tool, _run_id(context, run_id), "get", exc)
        return False, None


def store(cache: CacheBackend, key: str, value: Any, tool: str, context: RunContext | None, run_id: str | None) -> None:
    try:
        cache.set(key, value)
    except Exception as exc:  # noqa: BLE001 - a failing backend (disk full, locked) must not lose the result
        _cache_error(tool, _run_id(context, run_id), "set", exc)


def worth_storing(
    tool: BaseTool, name: str, args: dict[str, Any], raw: Any, context: RunContext | None, run_id: str | None
) -> bool:
    """The tool's ``cache_function(args, result)``; False when it raises."""
    try:
        return bool(tool.cache_function(args, raw))
    except Exception as exc:  # noqa: BLE001 - a broken predicate must not lose the result
        error = f"{type(exc).__name__}: {exc}"
        bus.emit("tool.cache_function.error", run_id=_run_id(context, run_id), tool=name, error=error)
        return False


def _run_id(context: RunContext | None, run_id: str | None) -> str | None:
    return (context.run_id if context is not None else None) or run_id


def _cache_error(tool: str, run_id: str | None, operation: str, exc: Exception) -> None:
    bus.emit("tool.cache.error", run_id=run_id, tool=tool, operation=operation, error=f"{type(exc).__name__}: {exc}")


_SCALARS = frozenset({str, int, float, bool, type(None)})
_IMMUTABLE = (Enum, PurePath, Decimal, UUID, date, datetime, clock, timedelta)  # validated values a tool cannot change

Hit = tuple[Mapping[str, Any], int, str, Any, Any]

LIMIT = 4096
"""Entries one executor keeps; the table starts afresh when full."""

LARGEST = 1024
"""Bytes of raw arguments worth keeping: a long text is validated again (its validation is
what it costs anyway), so the table stays within a few megabytes."""


def raw_key(tool: BaseTool, args: dict[str, Any]) -> bytes | None:
    """The table's key of ``args`` sent to ``tool``; None when marshal cannot write them exactly."""
    try:
        return dumps((id(tool), args), 2)
    except ValueError:  # a value marshal does not know (a subclass, an object): never kept
        return None


class Seen:
    """One tool's validated arguments for one set of raw arguments, and their cache key."""

    __slots__ = ("args", "hit", "key", "name", "stats", "tool")

    def __init__(self, tool: BaseTool, name: str, args: dict[str, Any], key: str, stats: ToolStats) -> None:
        self.tool = tool
        self.name = name
        self.args = args
        self.key = key
        self.stats = stats  # the name's counters (the executor's ``ToolTally`` keeps one object per name)
        self.hit: Hit | None = None
        """What the last cached value gave: (value, secrets generation, scrubbed text, artifact, raw)."""

    def remember(self, value: Mapping[str, Any]) -> Hit:
        """What a hit of cached ``value`` hands back, its text scrubbed at the current secrets generation."""
        hit = (value, generation(), scrub(value["content"]), value.get("artifact"), value.get("raw"))
        self.hit = hit  # one assignment: threads never see a mixed tuple
        return hit


class Recall:
    """The calls one executor has seen, by raw key (dict operations: safe across threads)."""

    __slots__ = ("seen",)

    def __init__(self) -> None:
        self.seen: dict[bytes, Seen] = {}
        """Raw key (``raw_key``) -> what validating those arguments gave; read directly on the hot path."""

    def keep(
        self, tool: BaseTool, name: str, raw: dict[str, Any], args: dict[str, Any], key: str, stats: ToolStats
    ) -> None:
        if not _SCALARS.issuperset(map(type, raw.values())):
            return
        if not all(type(value) in _SCALARS or isinstance(value, _IMMUTABLE) for value in args.values()):
            return  # a validator made a mutable value: the next call must get its own
        found = raw_key(tool, raw)
        if found is None or len(found) > LARGEST:
            return
        if len(self.seen) >= LIMIT:
            self.seen.clear()
        self.seen[found] = Seen(tool, name, args, key, stats)
