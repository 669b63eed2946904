"""The executor's cache: results read and stored through a backend that may fail, and calls seen before.

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

from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import Enum
from marshal import dumps
from pathlib import PurePath
from typing import Any
from uuid import UUID

from crew.common.events import bus
from crew.common.secrets import generation, scrub
from crew.tools.base import BaseTool
from crew.tools.cache import CacheBackend
from crew.tools.execution.stats import ToolStats
from crew.tools.messages import RunContext

__all__ = ["Recall", "Seen", "read", "store", "worth_storing"]


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
_IMMUTABLE = (Enum, PurePath, Decimal, UUID, date, datetime, time, timedelta)  # validated values a tool cannot change

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
