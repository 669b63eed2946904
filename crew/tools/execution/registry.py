"""The tools an executor can call, by the names a model may spell them with.

A call names a tool by its ``tool_name`` or its display name, exactly or in any case; the
first tool registered under a name keeps it. A call made with ``tools=`` (one agent's own
tools) only reaches those, and runs the caller's own instance.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

from pydantic import BaseModel as PydanticModel

from crew.tools.adapters import adapt_tool
from crew.tools.base import BaseTool
from crew.tools.portable_schema import recipe_of

__all__ = ["ToolRegistry", "as_tools", "one_tool_per_name", "same_tool"]


def as_tools(tools: Iterable[BaseTool]) -> list[BaseTool]:
    """``tools`` as BaseTools: LangChain and CrewAI tool objects adapted, anything else refused."""
    if isinstance(tools, BaseTool):
        raise TypeError(f"register a list of tools, got the single tool '{tools.name}': wrap it in a list")
    given: list[Any] = list(tools)  # anything a user put in tools=, not only BaseTools
    adapted = [tool if isinstance(tool, BaseTool) else adapt_tool(tool) or tool for tool in given]
    checked: list[BaseTool] = []
    for tool in adapted:
        if not isinstance(tool, BaseTool):
            what = getattr(tool, "__name__", None) or type(tool).__name__
            raise TypeError(f"{what!r} is not a tool: decorate the function with @tool, or subclass BaseTool")
        checked.append(tool)
    return checked


def one_tool_per_name(tools: list[BaseTool]) -> list[BaseTool]:
    """One agent's (or task's) tools, each name once: a model calls a tool by its name, so two
    tools answering to one name (``my tool`` and ``my_tool`` both become ``my_tool``) would
    leave one of them unreachable and send its calls to the other. Copies of one tool count once."""
    seen: dict[str, BaseTool] = {}
    kept: list[BaseTool] = []
    for tool in tools:
        spelled = tool.tool_name.lower()
        other = seen.get(spelled)
        if other is None:
            seen[spelled] = tool
            kept.append(tool)
        elif not same_tool(other, tool):
            raise ValueError(
                f"two different tools answer to the name '{tool.tool_name}' ({_what(other)} and {_what(tool)}): "
                "a model calls tools by name, so give one another name (@tool('other_name') or name=...)"
            )
    return kept


def _what(tool: BaseTool) -> str:
    """A tool as its author knows it: its name and the function or class behind it."""
    source = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    behind = getattr(source, "__qualname__", None) if source is not None else type(tool).__name__
    return f"'{tool.name}' from {behind}" if behind else f"'{tool.name}'"


class ToolRegistry:
    """Tools by name and by every spelling a call may use; the executor's lock guards ``add``.

    Each tool is also given its *bucket*: the name its cache entries, usage count and
    statistics are kept under in this executor (a cache key starts with it, ``ToolStats`` and
    usage slots are counted by it). Copies of one tool (each agent's instance, a copied crew's)
    share their name's bucket; a different tool registered under a taken name (two agents'
    unrelated ``search`` tools) gets a bucket of its own, ``search#2``, so neither is ever
    served the other's cached results or counted against the other's limit. (Not a scope: it
    says nothing of where the tool is visible, only where its counts and results are kept.)
    """

    __slots__ = ("_kinds", "buckets", "by_name", "lookup")

    def __init__(self) -> None:
        self.by_name: dict[str, BaseTool] = {}  # tool_name -> first tool registered under it
        self.lookup: dict[str, tuple[BaseTool, str, str]] = {}  # accepted spelling -> (tool, tool_name, bucket)
        self.buckets: dict[int, tuple[BaseTool, str]] = {}  # id(tool) -> (tool, its bucket), every tool registered
        self._kinds: dict[str, list[tuple[BaseTool, str]]] = {}  # tool_name -> (a tool, its bucket), one per kind

    def add(self, tool: BaseTool, bucket: str | None = None) -> str | None:
        """Register ``tool``; its bucket when that bucket is new, else None.

        ``bucket`` is one given by the registry of the run's driver (a Ray worker registers only
        its task's tools, so it could not tell a second ``lookup`` from the first). The first
        tool registered under a name keeps the name for calls made without ``tools=``.
        """
        if self.known(tool) is not None:
            return None
        bucket, new = self.bucket_for(tool, bucket)
        name = tool.tool_name
        if name not in self.by_name:
            self.by_name[name] = tool
            for spelling in (name, tool.name, name.lower(), tool.name.lower()):
                self.lookup.setdefault(spelling, (tool, name, bucket))
        return bucket if new else None

    def known(self, tool: BaseTool) -> str | None:
        """The bucket of a tool registered here, or None."""
        entry = self.buckets.get(id(tool))
        return entry[1] if entry is not None and entry[0] is tool else None

    def name_of(self, spelling: str) -> str:
        """The tool name ``spelling`` stands for (itself when no tool answers to it)."""
        found = self.lookup.get(spelling) or self.lookup.get(spelling.lower())
        return found[1] if found is not None else spelling

    def resolve(self, requested: str, tools: Sequence[BaseTool] | None) -> tuple[BaseTool, str, str] | None:
        """The tool called ``requested`` (exact, then case-insensitive), among ``tools`` when given,
        with its name and bucket ("" for a tool of the caller's own not registered here)."""
        found = self.lookup.get(requested) or self.lookup.get(requested.lower())
        if tools is None:
            return found
        if found is not None:
            for allowed in tools:
                if allowed is found[0]:
                    return found
        lowered = requested.lower()
        for allowed in tools:
            name = allowed.tool_name
            if lowered in (name.lower(), allowed.name.lower()):
                return allowed, name, self.known(allowed) or ""
        return None

    def bucket_for(self, tool: BaseTool, given: str | None = None) -> tuple[str, bool]:
        """``tool``'s bucket, and whether it is new: its own if known, ``given`` (the driver's), one of
        a copy of it, else a new one. Also for a tool first met in a call's ``tools=`` (an agent's
        MCP tools, opened for its run). The caller holds the executor's lock."""
        bucket = self.known(tool)
        if bucket is not None:
            return bucket, False
        name = tool.tool_name
        kinds = self._kinds.setdefault(name, [])
        bucket = next((known for other, known in kinds if (known == given if given else same_tool(other, tool))), None)
        new = bucket is None
        if bucket is None:
            bucket = given or (name if not kinds else f"{name}#{len(kinds) + 1}")
            kinds.append((tool, bucket))
        self.buckets[id(tool)] = (tool, bucket)
        return bucket, new


def same_tool(one: BaseTool, other: BaseTool) -> bool:
    """Whether two instances are copies of one tool: the same class and the same settings (the
    function, schema and options; a usage count is not a setting)."""
    if one is other:
        return True
    if type(one) is not type(other):
        return False
    try:
        return _settings(one) == _settings(other)
    except Exception:  # noqa: BLE001 - a setting that cannot be compared (an array): not known to be the same
        return False


def _settings(tool: BaseTool) -> dict[str, object]:
    settings = {key: value for key, value in vars(tool).items() if key != "current_usage_count"}
    wrapped = settings.get("wrapped")  # an adapted LangChain or CrewAI tool: copies wrap equal objects
    if wrapped is not None and hasattr(wrapped, "__dict__"):
        fields = cast("dict[str, object]", vars(wrapped))
        theirs = {k: _comparable(v) for k, v in fields.items() if k != "current_usage_count"}
        settings["wrapped"] = (type(wrapped), theirs)
    recipe = recipe_of(tool.args_schema)
    if recipe is not None:  # a generated model: one function wrapped twice gets two equal classes
        settings["args_schema"] = (recipe.make, recipe.args, recipe.kwargs, tool.args_schema.__doc__)
    else:
        settings["args_schema"] = _comparable(tool.args_schema)
    return settings


def _comparable(value: object) -> object:
    """A model class by what it declares: CrewAI builds each tool instance an argument class of its own."""
    if isinstance(value, type) and issubclass(value, PydanticModel):
        return (value.__name__, value.model_json_schema())
    return cast(object, value)  # not a class pyright can name: compared as it is
