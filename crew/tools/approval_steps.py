"""The approval step of the executor's pipeline: a call whose tool ``requires_approval`` waits here.

A decision made beforehand (a resumed run's ``approvals=``) is taken first, then the executor's
``approver`` is asked; without either the call comes back ``pending`` and its run pauses. A
denial is the call's error result; edited arguments are validated, and run as given.
"""

from __future__ import annotations

import threading
from inspect import isawaitable
from typing import Any

from crew.blocking import run_blocking
from crew.errors import ToolArgumentsError
from crew.tools.approval import (
    Approval,
    ApprovalRequest,
    Approver,
    DecisionKey,
    announce_decision,
    ask_approver,
    request_for,
    take_decision,
    waiting_result,
)
from crew.tools.calls import RunContext, ToolResult, ToolStatus
from crew.tools.pending import Pending

__all__ = ["ApprovalSteps"]


class ApprovalSteps:
    """What ``ToolExecutor`` does for a call that needs a person's say (a mixin: it uses the executor's
    lock, its ``approver`` and ``decisions``, and how it finishes a call)."""

    _lock: threading.Lock
    approver: Approver | None
    decisions: dict[DecisionKey, Any]

    def _finish(
        self,
        pending: Pending,
        content: str,
        status: ToolStatus,
        *,
        artifact: Any = None,
        raw: Any = None,
        cached: bool = False,
        refused: bool = False,
        seconds: float | None = None,
    ) -> ToolResult:
        raise NotImplementedError  # the executor's

    def _invalid(self, pending: Pending, exc: ToolArgumentsError) -> ToolResult:
        raise NotImplementedError  # the executor's

    def _run_id(self, context: RunContext | None) -> str | None:
        raise NotImplementedError  # the executor's

    def _approve(self, pending: Pending) -> ToolResult | None:
        """None: the call goes on; else its result (denied, or waiting for a person)."""
        request = self._approval_request(pending)
        if request is None:
            return None
        answer = self._decision(request)
        if answer is None and self.approver is not None:
            answer = self.approver(request)
            if isawaitable(answer):
                answer = run_blocking(answer)
        return self._apply_decision(pending, answer, request)

    async def _aapprove(self, pending: Pending) -> ToolResult | None:
        request = self._approval_request(pending)
        if request is None:
            return None
        answer = self._decision(request)
        if answer is None and self.approver is not None:
            answer = await ask_approver(self.approver, request)
        return self._apply_decision(pending, answer, request)

    def _approval_request(self, pending: Pending) -> ApprovalRequest | None:
        rule = pending.tool.requires_approval
        return request_for(
            rule, pending.name, pending.args, pending.call_id, pending.context, self._run_id(pending.context)
        )

    def _decision(self, request: ApprovalRequest) -> Any:
        """A decision given beforehand (``approvals=`` of a resumed run), taken once."""
        with self._lock:
            return take_decision(self.decisions, request)

    def _apply_decision(self, pending: Pending, answer: Any, request: ApprovalRequest) -> ToolResult | None:
        """None: the call goes on (perhaps with edited arguments); else its result (denied, pending)."""
        decision = Approval.of(answer)
        if decision is None:
            return waiting_result(request)
        announce_decision(request, decision)
        if decision.decision == "deny":
            reason = decision.reason or "no reason given"
            pending.key = None  # a denial is never cached
            return self._finish(pending, f"denied by a person: {reason}", "error")
        if decision.decision == "edit":
            try:
                pending.args = pending.tool.validate_args(decision.arguments or {})
            except ToolArgumentsError as exc:
                pending.key = None
                return self._invalid(pending, exc)
            pending.key = None  # arguments a person wrote: run as given, not shared through the cache
        return None
