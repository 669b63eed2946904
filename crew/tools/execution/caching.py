"""The executor's use of a cache backend, which may fail: a failure never loses a result.

An unreadable backend is a miss, one that cannot store (disk full, locked) loses only the
entry, and a tool's ``cache_function`` that raises stores nothing. Each failure is
announced (``tool.cache.error``, ``tool.cache_function.error``) instead of raised.

Each takes the call's context and the executor's run id, and combines them (the event's
run id) only when something fails: these run on every cache miss.
"""

from __future__ import annotations

from typing import Any

from crew.common.events import bus
from crew.tools.base import BaseTool
from crew.tools.cache import CacheBackend
from crew.tools.messages import RunContext

__all__ = ["read", "store", "worth_storing"]


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
