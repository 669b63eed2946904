"""crew: orchestrate teams of LLM agents.

The public API is re-exported here and loaded on first access, so ``import crew``
stays cheap and nothing heavy (litellm, networkx, structlog) loads until used.

Three lists say the same thing for three readers, and ``tests/test_exports.py`` keeps them
equal: the literal ``__all__`` (what ``from crew import *`` and type checkers export), the
``TYPE_CHECKING`` imports (where a type checker or IDE finds each name and its annotations),
and ``_EXPORTS`` (where ``__getattr__`` finds it at run time, on first access).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # tools
    "BaseTool": "crew.tools.base",
    "Tool": "crew.tools.function_tool",
    "tool": "crew.tools.decorator",
    "ToolCall": "crew.tools.messages",
    "ToolResult": "crew.tools.messages",
    "RunContext": "crew.tools.messages",
    "ToolExecutor": "crew.tools.execution.executor",
    "Approval": "crew.tools.approval",
    "ApprovalRequest": "crew.tools.approval",
    "adapt_tool": "crew.tools.adapters",
    "MCPServer": "crew.mcp.server",  # crew.mcp itself never imports the mcp SDK until a server opens
    # tasks and outputs
    "Task": "crew.tasks.task",
    "TaskOutput": "crew.tasks.output",
    "CrewOutput": "crew.tasks.output",
    "Usage": "crew.common.usage",
    # agents and models
    "Agent": "crew.agent.agent",
    "LLM": "crew.models",
    "LLMResponse": "crew.models",
    # crews
    "Crew": "crew.crew",
    "Process": "crew.crew",
    # streaming (docs/streaming.md)
    "StreamEvent": "crew.stream.events",
    "RunStarted": "crew.stream.events",
    "TaskStarted": "crew.stream.events",
    "TaskFinished": "crew.stream.events",
    "TaskFailed": "crew.stream.events",
    "TaskSkipped": "crew.stream.events",
    "AgentTurnStarted": "crew.stream.events",
    "TextDelta": "crew.stream.events",
    "ToolCallStarted": "crew.stream.events",
    "ToolCallFinished": "crew.stream.events",
    "ApprovalRequested": "crew.stream.events",
    # flows (docs/flows.md)
    "Flow": "crew.flow.flow",
    "FlowState": "crew.flow.state",
    "start": "crew.flow.decorators",
    "listen": "crew.flow.decorators",
    "router": "crew.flow.decorators",
    "persist": "crew.flow.decorators",
    "or_": "crew.flow.conditions",
    "and_": "crew.flow.conditions",
    # execution backends
    "KickoffResult": "crew.backends.base",
    "RayBackend": "crew.backends.ray",
    # observability and persistence
    "bus": "crew.common.events",
    "Event": "crew.common.events",
    "RunStore": "crew.store",
    # errors
    "CrewError": "crew.errors",
    "ConfigError": "crew.errors",
    "LLMError": "crew.errors",
    "ToolException": "crew.errors",
    "CrewRunError": "crew.errors",
    "MissingInputError": "crew.errors",
    "GraphError": "crew.errors",
    "BudgetExceededError": "crew.errors",
    "StoreError": "crew.errors",
    "FlowError": "crew.errors",
}

__all__ = [
    "LLM",
    "Agent",
    "AgentTurnStarted",
    "Approval",
    "ApprovalRequest",
    "ApprovalRequested",
    "BaseTool",
    "BudgetExceededError",
    "ConfigError",
    "Crew",
    "CrewError",
    "CrewOutput",
    "CrewRunError",
    "Event",
    "Flow",
    "FlowError",
    "FlowState",
    "GraphError",
    "KickoffResult",
    "LLMError",
    "LLMResponse",
    "MCPServer",
    "MissingInputError",
    "Process",
    "RayBackend",
    "RunContext",
    "RunStarted",
    "RunStore",
    "StoreError",
    "StreamEvent",
    "Task",
    "TaskFailed",
    "TaskFinished",
    "TaskOutput",
    "TaskSkipped",
    "TaskStarted",
    "TextDelta",
    "Tool",
    "ToolCall",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolException",
    "ToolExecutor",
    "ToolResult",
    "Usage",
    "__version__",
    "adapt_tool",
    "and_",
    "bus",
    "listen",
    "or_",
    "persist",
    "router",
    "start",
    "tool",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'crew' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from crew.agent.agent import Agent
    from crew.backends.base import KickoffResult
    from crew.backends.ray import RayBackend
    from crew.common.events import Event, bus
    from crew.common.usage import Usage
    from crew.crew import Crew, Process
    from crew.errors import (
        BudgetExceededError,
        ConfigError,
        CrewError,
        CrewRunError,
        FlowError,
        GraphError,
        LLMError,
        MissingInputError,
        StoreError,
        ToolException,
    )
    from crew.flow.conditions import and_, or_
    from crew.flow.decorators import listen, persist, router, start
    from crew.flow.flow import Flow
    from crew.flow.state import FlowState
    from crew.mcp.server import MCPServer
    from crew.models import LLM, LLMResponse
    from crew.store import RunStore
    from crew.stream.events import (
        AgentTurnStarted,
        ApprovalRequested,
        RunStarted,
        StreamEvent,
        TaskFailed,
        TaskFinished,
        TaskSkipped,
        TaskStarted,
        TextDelta,
        ToolCallFinished,
        ToolCallStarted,
    )
    from crew.tasks.output import CrewOutput, TaskOutput
    from crew.tasks.task import Task
    from crew.tools.adapters import adapt_tool
    from crew.tools.approval import Approval, ApprovalRequest
    from crew.tools.base import BaseTool
    from crew.tools.decorator import tool
    from crew.tools.execution.executor import ToolExecutor
    from crew.tools.function_tool import Tool
    from crew.tools.messages import RunContext, ToolCall, ToolResult
