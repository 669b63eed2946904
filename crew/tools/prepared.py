"""What a tool instance works out once and reads on every call, behind one attribute lookup.

``BaseTool`` keeps one ``ToolRuntime`` in its private attributes: whether it has native async
code, whether it is async only, which parameters take a ``RunContext``, the lock of its
usage count, and caches (its describe() text, its arguments' fields validator). A copied or
shipped tool gets a fresh one: caches stay behind and the copy counts under its own lock.
"""

from __future__ import annotations

import threading
from typing import Any

from pydantic import BaseModel
from pydantic_core import SchemaValidator

from crew.tools.calling import fields_validator

__all__ = ["ToolRuntime", "UsageLock"]


class UsageLock:
    """The lock guarding a tool's usage count; a copied tool gets a lock of its own."""

    __slots__ = ("lock",)

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def __copy__(self) -> UsageLock:
        return UsageLock()

    def __deepcopy__(self, memo: dict[int, Any]) -> UsageLock:
        return UsageLock()

    def __reduce__(self) -> tuple[type[UsageLock], tuple[()]]:
        return UsageLock, ()


class ToolRuntime:
    """Facts derived once at build time, read on every call (one attribute lookup)."""

    __slots__ = ("async_only", "described", "fields", "injected", "native_async", "usage")

    def __init__(self, native_async: bool, async_only: bool, injected: frozenset[str]) -> None:
        self.native_async = native_async
        self.async_only = async_only
        self.injected = injected
        self.usage = UsageLock()
        self.described: tuple[tuple[Any, ...], str] | None = None  # describe()'s text, by what it says
        # (args_schema, its fields validator): the schema is checked by identity, so a tool
        # given another args_schema after it was built validates with the new one
        self.fields: tuple[type[BaseModel] | None, SchemaValidator | None] = (None, None)

    def __reduce__(self) -> tuple[type[ToolRuntime], tuple[bool, bool, frozenset[str]]]:
        """A copied or shipped tool starts with fresh caches and its own usage lock: the cached
        validator and argument class may not exist where it goes (a generated schema travels as
        its recipe and is built again there)."""
        return ToolRuntime, (self.native_async, self.async_only, self.injected)

    def validator(self, schema: type[BaseModel]) -> SchemaValidator | None:
        """``schema``'s fields validator (``crew.tools.calling``), kept here after the first call."""
        pair = self.fields
        if pair[0] is not schema:
            pair = self.fields = (schema, fields_validator(schema))
        return pair[1]
