"""Where the executor keeps tool results between identical calls.

A backend only maps string keys to JSON-like values; what a key means (tool name +
canonical arguments) and what is worth storing are the executor's business. The
in-memory backend lives as long as its executor (one run); the SQLite backend
outlives processes, so it stores JSON only — never pickle, which would let anyone
able to write the cache file run code in every process that reads it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from pydantic_core import PydanticSerializationError, to_jsonable_python

from crew.tools.messages import jsonable

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
