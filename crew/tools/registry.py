"""The tools an executor can call, by the names a model may spell them with.

A call names a tool by its ``tool_name`` or its display name, exactly or in any case; the
first tool registered under a name keeps it. A call made with ``tools=`` (one agent's own
tools) only reaches those, and runs the caller's own instance.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from crew.tools.adapters import adapt_tool
from crew.tools.base import BaseTool

__all__ = ["ToolRegistry", "as_tools"]


def as_tools(tools: Iterable[BaseTool]) -> list[BaseTool]:
    """``tools`` as BaseTools: LangChain and CrewAI tool objects adapted, anything else refused."""
    if isinstance(tools, BaseTool):
        raise TypeError(f"register a list of tools, got the single tool '{tools.name}': wrap it in a list")
    tools = [tool if isinstance(tool, BaseTool) else adapt_tool(tool) or tool for tool in tools]
    for tool in tools:
        if not isinstance(tool, BaseTool):
            what = getattr(tool, "__name__", None) or type(tool).__name__
            raise TypeError(f"{what!r} is not a tool: decorate the function with @tool, or subclass BaseTool")
    return tools


class ToolRegistry:
    """Tools by name and by every spelling a call may use; the executor's lock guards ``add``."""

    __slots__ = ("by_name", "lookup")

    def __init__(self) -> None:
        self.by_name: dict[str, BaseTool] = {}  # tool_name -> first tool registered under it
        self.lookup: dict[str, tuple[BaseTool, str]] = {}  # accepted spelling -> (tool, tool_name)

    def add(self, tool: BaseTool) -> bool:
        """Register ``tool`` under its names; False when its name was taken (the first tool keeps it)."""
        name = tool.tool_name
        if name in self.by_name:
            return False
        self.by_name[name] = tool
        for spelling in (name, tool.name, name.lower(), tool.name.lower()):
            self.lookup.setdefault(spelling, (tool, name))
        return True

    def name_of(self, spelling: str) -> str:
        """The tool name ``spelling`` stands for (itself when no tool answers to it)."""
        found = self.lookup.get(spelling) or self.lookup.get(spelling.lower())
        return found[1] if found is not None else spelling

    def resolve(self, requested: str, tools: Sequence[BaseTool] | None) -> tuple[BaseTool, str] | None:
        """The tool called ``requested`` (exact, then case-insensitive), among ``tools`` when given."""
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
                return allowed, name
        return None
