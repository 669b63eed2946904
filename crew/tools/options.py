"""Build-time helpers of BaseTool: defaults, descriptions and readable definition errors.

Nothing here runs per call.
"""

from __future__ import annotations

import inspect
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from crew.errors import ToolDefinitionError


class EnvVar(BaseModel):
    """An environment variable a tool needs (declared so UIs and docs can list it)."""

    name: str
    description: str = ""
    required: bool = True
    default: str | None = None


def always_cache(arguments: dict[str, Any], result: Any) -> bool:
    """The default ``cache_function``: every successful result may be stored."""
    return True


def never_cache(arguments: dict[str, Any], result: Any) -> bool:
    """A ``cache_function`` for tools whose every call must run (side effects, fresh data).

    The executor recognises it before the call: such a tool is neither looked up in the
    cache nor made to wait for an identical call in flight, so concurrent calls overlap.
    """
    return False


def pick_description(explicit: str | None, docstring: str | None, schema: Any) -> str | None:
    """Explicit > docstring (dedented, stripped) > the argument schema's own description."""
    if explicit:
        return explicit
    if docstring and inspect.cleandoc(docstring):
        return inspect.cleandoc(docstring)
    if isinstance(schema, dict):
        return cast("dict[str, Any]", schema).get("description") or None
    own = schema.__dict__.get("__doc__") if isinstance(schema, type) else None
    return inspect.cleandoc(own) if own and inspect.cleandoc(own) else None


def is_async_callable(fn: Any) -> bool:
    """An ``async def`` function, a partial of one, or an object whose ``__call__`` is one."""
    return inspect.iscoroutinefunction(fn) or (callable(fn) and inspect.iscoroutinefunction(fn.__call__))


def declared_default(cls: type[BaseModel], field: str) -> Any:
    """The default a subclass declared for ``field`` (``name: str = "search"``), else None."""
    info = cls.model_fields.get(field)
    if info is None or info.is_required():
        return None
    return info.get_default(call_default_factory=True)


def definition_error(cls: type[BaseModel], data: dict[str, Any], exc: ValidationError) -> ToolDefinitionError:
    """Turn pydantic's report into one readable ToolDefinitionError (or surface ours)."""
    for error in exc.errors(include_url=False):
        original = (error.get("ctx") or {}).get("error")
        if isinstance(original, ToolDefinitionError):
            return original
    problems = "; ".join(
        f"{'.'.join(str(p) for p in error['loc']) or 'tool'}: {error['msg']}" for error in exc.errors(include_url=False)
    )
    label = data.get("name") or declared_default(cls, "name") or cls.__name__
    return ToolDefinitionError(f"Invalid tool '{label}': {problems}")
