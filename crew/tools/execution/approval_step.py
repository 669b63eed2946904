"""The approval step of the executor's pipeline: a call whose tool ``requires_approval`` waits here.

A decision made beforehand (a resumed run's ``approvals=``) is taken first, then the executor's
``approver`` is asked; without either the call comes back ``pending`` and its run pauses. A
denial is the call's error result; edited arguments are validated, and run as given.
"""

from __future__ import annotations

from inspect import isawaitable
from typing import TYPE_CHECKING, Any

from crew.common.blocking import run_blocking
from crew.errors import ToolArgumentsError
from crew.tools.approval import (
    Approval,
    ApprovalRequest,
    announce_decision,
    ask_approver,
    request_for,
    take_decision,
    waiting_result,
)
from crew.tools.execution.call import Pending
from crew.tools.messages import ToolResult

if TYPE_CHECKING:
    from crew.tools.execution.executor import ToolExecutor

__all__ = ["aapprove", "approve"]


def approve(executor: ToolExecutor, pending: Pending) -> ToolResult | None:
    """None: the call goes on; else its result (denied, or waiting for a person)."""
    request = _request(executor, pending)
    if request is None:
        return None
    answer = _decision(executor, request)
    if answer is None and executor.approver is not None:
        answer = executor.approver(request)
        if isawaitable(answer):
            answer = run_blocking(answer)
    return _apply(executor, pending, answer, request)


async def aapprove(executor: ToolExecutor, pending: Pending) -> ToolResult | None:
    """``approve`` from async code: a sync approver runs in a worker thread (it may prompt)."""
    request = _request(executor, pending)
    if request is None:
        return None
    answer = _decision(executor, request)
    if answer is None and executor.approver is not None:
        answer = await ask_approver(executor.approver, request)
    return _apply(executor, pending, answer, request)


def _request(executor: ToolExecutor, pending: Pending) -> ApprovalRequest | None:
    rule = pending.tool.requires_approval
    run_id = executor._run_id(pending.context)  # the executor's own step: its private parts
    return request_for(rule, pending.name, pending.args, pending.call_id, pending.context, run_id)


def _decision(executor: ToolExecutor, request: ApprovalRequest) -> Any:
    """A decision given beforehand (``approvals=`` of a resumed run), taken once."""
    with executor._lock:
        return take_decision(executor.decisions, request)


def _apply(executor: ToolExecutor, pending: Pending, answer: Any, request: ApprovalRequest) -> ToolResult | None:
    """None: the call goes on (perhaps with edited arguments); else its result (denied, pending)."""
    decision = Approval.of(answer)
    if decision is None:
        return waiting_result(request)
    announce_decision(request, decision)
    if decision.decision == "deny":
        reason = decision.reason or "no reason given"
        pending.key = None  # a denial is never cached
        return executor._finish(pending, f"denied by a person: {reason}", "error")
    if decision.decision == "edit":
        try:
            pending.args = pending.tool.validate_args(decision.arguments or {})
        except ToolArgumentsError as exc:
            pending.key = None
            return executor._invalid(pending, exc)
        pending.key = None  # arguments a person wrote: run as given, not shared through the cache
    return None
