"""A person's say over a tool call: which calls need it, and what the answer can be.

A tool opts in with ``requires_approval`` (True, or a function of the call deciding per
call). The executor asks before the call claims a usage slot or reaches the cache's
single flight: an approved call then runs once like any other; a denied one becomes an
error observation ("denied by a person: ...") and a call still waiting comes back
``pending`` (neither consumes a slot, neither is ever cached). Who answers is the run's
business (an ``approver`` callable, a terminal prompt, or nobody: the run pauses).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from crew.events import bus
from crew.tools.calls import RunContext, ToolCall, ToolResult

__all__ = [
    "Approval",
    "ApprovalRequest",
    "Approver",
    "announce_decision",
    "ask_approver",
    "needs_approval",
    "request_for",
    "waiting_result",
]


class ApprovalRequest(BaseModel):
    """A tool call waiting for a decision: what an approver receives and a paused run lists."""

    model_config = ConfigDict(frozen=True)

    call_id: str
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    agent: str | None = None
    task: str | None = None
    run_id: str | None = None


class Approval(BaseModel):
    """A decision about one call: ``Approval.approve()``, ``Approval.deny(reason)``, ``Approval.edit(arguments)``."""

    model_config = ConfigDict(frozen=True)

    decision: Literal["approve", "deny", "edit"]
    reason: str = ""
    arguments: dict[str, Any] | None = None

    @classmethod
    def approve(cls) -> Approval:
        return cls(decision="approve")

    @classmethod
    def deny(cls, reason: str = "") -> Approval:
        return cls(decision="deny", reason=reason)

    @classmethod
    def edit(cls, arguments: dict[str, Any]) -> Approval:
        """Run the call, with ``arguments`` instead of the model's (validated like any call's)."""
        if not isinstance(arguments, dict):
            raise TypeError(f"Approval.edit takes the new arguments as a dict, got {type(arguments).__name__}")
        return cls(decision="edit", arguments=arguments)

    @classmethod
    def of(cls, value: Any) -> Approval | None:
        """An approver's answer as a decision: True, False, an Approval, or None (no decision: wait)."""
        if value is None or isinstance(value, Approval):
            return value
        if isinstance(value, bool):
            return cls.approve() if value else cls.deny()
        raise TypeError(f"an approver returns True, False, an Approval or None, got {type(value).__name__}")


Approver = Callable[[ApprovalRequest], Any]
"""``approver(request)`` returns True, False, an Approval or None (wait), or an awaitable of one;
a sync approver runs in a worker thread (it may prompt)."""


def needs_approval(rule: Any, call: ToolCall) -> bool:
    """Whether ``call`` needs a person: the tool's ``requires_approval`` (a bool, or a function of the call)."""
    if rule is None or rule is False:
        return False
    if rule is True:
        return True
    decided = rule(call)
    if inspect.isawaitable(decided):
        raise TypeError("requires_approval must be a plain function of the call (not async): it decides at once")
    return bool(decided)


def request_for(
    rule: Any, name: str, args: dict[str, Any], call_id: str, context: RunContext | None, run_id: str | None
) -> ApprovalRequest | None:
    """The request for a person when this call needs one (``rule``: its tool's ``requires_approval``)."""
    if not needs_approval(rule, ToolCall(name=name, args=args, id=call_id)):
        return None
    return ApprovalRequest(
        call_id=call_id,
        tool=name,
        args=args,
        agent=context.agent if context is not None else None,
        task=context.task if context is not None else None,
        run_id=run_id,
    )


async def ask_approver(approver: Approver, request: ApprovalRequest) -> Any:
    """The approver's answer from async code: a sync approver runs in a worker thread (it may prompt)."""
    if inspect.iscoroutinefunction(approver):
        return await approver(request)
    from crew.blocking import in_thread

    answer = await in_thread(approver, request)
    return await answer if inspect.isawaitable(answer) else answer


def waiting_result(request: ApprovalRequest) -> ToolResult:
    """A call nobody decided yet: announced, and handed back ``pending`` (it never ran)."""
    if bus.enabled("approval.requested"):
        bus.emit("approval.requested", **request.model_dump())
    return ToolResult(
        content=f"the call of '{request.tool}' waits for a person's approval",
        tool_call_id=request.call_id,
        name=request.tool,
        status="error",
        pending=True,
    )


def announce_decision(request: ApprovalRequest, decision: Approval) -> None:
    if bus.enabled("approval.decided"):
        bus.emit(
            "approval.decided",
            run_id=request.run_id,
            call_id=request.call_id,
            tool=request.tool,
            decision=decision.decision,
            reason=decision.reason,
            task=request.task,
            agent=request.agent,
        )
