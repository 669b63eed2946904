"""Tool definition and execution. Nothing here knows about agents or tasks."""

from crew.errors import ToolException
from crew.tools.adapters import adapt_tool
from crew.tools.base import BaseTool
from crew.tools.cache import CacheBackend, InMemoryCache, SQLiteCache
from crew.tools.decorator import tool
from crew.tools.execution.executor import ToolExecutor
from crew.tools.function_tool import Tool
from crew.tools.messages import RunContext, ToolCall, ToolResult
from crew.tools.options import EnvVar, always_cache, never_cache
from crew.tools.schema import sanitize_tool_name

__all__ = [
    "BaseTool",
    "CacheBackend",
    "EnvVar",
    "InMemoryCache",
    "RunContext",
    "SQLiteCache",
    "Tool",
    "ToolCall",
    "ToolException",
    "ToolExecutor",
    "ToolResult",
    "adapt_tool",
    "always_cache",
    "never_cache",
    "sanitize_tool_name",
    "tool",
]
