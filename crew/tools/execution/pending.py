"""The executor's record of one resolved, validated call on its way through the pipeline.

A plain class with slots, not a pydantic model: the pipeline tells it from a finished
``ToolResult`` with one ``isinstance`` and fills it in step by step.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from crew.tools.base import BaseTool
from crew.tools.execution.single_flight import NOT_SHARED
from crew.tools.messages import RunContext

__all__ = ["Pending"]


class Pending:
    """One resolved, validated call on its way through the pipeline."""

    __slots__ = (
        "args",
        "call_id",
        "context",
        "counted",
        "key",
        "leading",
        "name",
        "ran",
        "scope",
        "shared",
        "start",
        "tool",
        "waiters",
    )

    def __init__(
        self,
        tool: BaseTool,
        name: str,
        scope: str,
        call_id: str,
        args: dict[str, Any],
        context: RunContext | None,
        start: float,
    ) -> None:
        self.tool = tool
        self.name = name  # what the model called it: results and events carry it
        self.scope = scope  # what its cache entries, usage and statistics are kept under (``ToolRegistry``)
        self.call_id = call_id
        self.args = args
        self.context = context
        self.start = start
        self.key: str | None = None
        self.leading = False  # True while identical calls may wait for this one
        self.waiters: Future[Any] | None = None  # created by the first identical call that waits
        self.shared: Any = NOT_SHARED  # the stored cache value, once there is one
        self.counted = False  # whether ToolStats counted this call already
        self.ran: float | None = None  # when the tool started (its usage slot taken), if it did

    def tool_context(self, run_id: str | None) -> RunContext | None:
        """The RunContext the tool receives: built only for tools that ask for one (``run_id``: the executor's)."""
        if not self.tool.__pydantic_private__["_rt"].injected:  # pyright: ignore[reportOptionalSubscript] - ``injected_params`` without its frame
            return self.context
        update: dict[str, Any] = {"run_id": (self.context.run_id if self.context is not None else None) or run_id}
        update["tool_call_id"] = self.call_id
        if self.context is None:
            return RunContext(**update)
        return self.context.model_copy(update=update)
