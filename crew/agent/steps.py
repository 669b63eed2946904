"""What the loop reports after every model turn: the ``AgentStep`` a ``step_callback`` receives.

Kept apart from the loop: a callback's author (and ``verbose=True``'s one line per step)
needs the step's shape, not the loop that makes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from crew.common.usage import Usage
from crew.tools.messages import ToolCall, ToolResult

__all__ = ["AgentStep", "StepCallback", "StepKind", "describe_step"]

StepKind = Literal["tool_calls", "final_answer", "correction", "output_retry"]


class AgentStep(BaseModel):
    """What ``step_callback`` receives after every model turn."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    agent: str
    task: str
    turn: int
    kind: StepKind
    text: str = ""  # the model's text: its thought, answer or unparseable reply
    tool_calls: list[ToolCall] = Field(default_factory=list)
    results: list[ToolResult] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)  # of this turn's model calls (its own, any function_calling_llm)


StepCallback = Callable[[AgentStep], Any]


def describe_step(step: AgentStep, width: int = 160) -> str:
    """One line per step for ``verbose=True``."""
    head = f"[{step.agent}] {step.task} #{step.turn} {step.kind}"
    if step.results:
        body = "; ".join(f"{r.name} -> {r.status}{' (cached)' if r.cached else ''}: {r.content}" for r in step.results)
    else:
        body = step.text
    line = f"{head}: {' '.join(body.split())}"
    return line if len(line) <= width else line[: width - 1] + "…"
