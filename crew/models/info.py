"""What a model call is for: who asks, on which task, at which turn, with which tools.

The agent loop knows these facts; a model does not need them to answer, so they stay out
of the ChatModel contract. The run scope publishes them for the duration of each call
(a context variable, so concurrent tasks each see their own), and whoever cares reads
:func:`current_call`: ``FunctionModel`` hands them to its function, so tests script by task
rather than by parsing prompt text; tracing can label spans with them.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CALL_INFO", "ModelCallInfo", "current_call"]


@dataclass(slots=True)
class ModelCallInfo:
    """The facts of one model call. Outside an agent's run every field is empty.

    ``context`` names the tasks whose outputs the task was given (those that are done:
    a skipped or failed one is not in the prompt either); ``tools`` names the
    tools offered on this call (none when the loop asks for a final answer); ``turn``
    counts the agent's model turns on this task from 1.
    """

    agent: str = ""
    task: str = ""
    context: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    turn: int = 0
    output_schema: dict[str, Any] | None = None
    run_id: str | None = None
    model: str = ""
    """The name of the model being called (``ChatModel.model``)."""
    tool_hints: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    """What the offered tools say of themselves, by tool name: an MCP server's annotations
    (``readOnlyHint``, ``destructiveHint``, ``openWorldHint``); a tool that says nothing is absent.
    The offline ``TestModel`` reads them to leave destructive and open-world tools alone."""


CALL_INFO: ContextVar[ModelCallInfo | None] = ContextVar("crew_model_call", default=None)
"""Where the run scope publishes the info of the call in progress (``set`` before, ``reset`` after)."""


def current_call() -> ModelCallInfo | None:
    """The info of the model call in progress in this context, if an agent's loop made it."""
    return CALL_INFO.get()
