"""A person's answer to a paused run, as a client sends it: approve or deny its waiting calls.

An A2A follow-up message on a task waiting for input (``input-required``) answers with a
text part (``approve``, ``yes``, ``deny``, ``no``, the denial's reason after it: ``deny: keep
the logs``) or a data part (``{"decision": "approve" | "deny", "reason": "...", "call_id": "..."}``,
or ``{"approve": true | false, ...}``). The answer decides every call the run waits on, or
only ``call_id``'s when it names one; calls it leaves undecided keep waiting, and the run
pauses again on them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from crew.errors import ServeInputError

__all__ = ["HOW_TO_ANSWER", "Answer", "parse_answer"]

HOW_TO_ANSWER = (
    "Answer this task with a message: 'approve' or 'deny REASON' (every waiting call), or a data part "
    '{"decision": "approve" | "deny", "reason": "...", "call_id": "..."} (call_id: only that call).'
)

_YES = {"approve", "approved", "yes", "y", "ok", "allow"}
_NO = {"deny", "denied", "no", "n", "reject", "refuse"}


class Answer:
    """One decision (``approve`` or not, with the reason told to the agent) for one call or all of them."""

    def __init__(self, approve: bool, reason: str = "", call_id: str | None = None) -> None:
        self.approve, self.reason, self.call_id = approve, reason, call_id

    def approvals(self, waiting: list[dict[str, Any]], *, crew: str) -> dict[Any, Any]:
        """The decisions for ``resume`` (keyed by ``(task, call id)``) of the undecided calls of ``waiting``
        (the rows of ``crew.store.approvals.pending``); ``ServeInputError`` when ``call_id`` waits nowhere."""
        from crew.tools.approval import Approval

        decision = Approval.approve() if self.approve else Approval.deny(self.reason or "denied through A2A")
        rows = [row for row in waiting if row.get("decision") is None]
        if self.call_id is not None:
            rows = [row for row in rows if row["call_id"] == self.call_id]
            if not rows:
                known = ", ".join(row["call_id"] for row in waiting if row.get("decision") is None) or "none"
                raise ServeInputError(f"no call {self.call_id!r} waits for a decision (waiting: {known})", crew=crew)
        return {(row["task"], row["call_id"]): decision for row in rows}


def parse_answer(texts: list[str], data: list[Any], *, crew: str) -> Answer:
    """The answer a message's text and data parts give; ``ServeInputError`` saying how to answer otherwise."""
    for part in data:
        if isinstance(part, Mapping):
            return _from_data(part, crew)
    text = " ".join(t.strip() for t in texts if t.strip())
    match = re.match(r"\s*([A-Za-z]+)\W*(.*)", text, flags=re.DOTALL)
    word = match.group(1).lower() if match else ""
    if word in _YES:
        return Answer(True)
    if word in _NO:
        return Answer(False, match.group(2).strip() if match else "")
    shown = text[:60] + ("..." if len(text) > 60 else "")
    raise ServeInputError(f"the answer {shown!r} is neither an approval nor a denial. {HOW_TO_ANSWER}", crew=crew)


def _from_data(part: Mapping[str, Any], crew: str) -> Answer:
    reason = str(part.get("reason") or "")
    call_id = part.get("call_id")
    call = str(call_id) if call_id is not None else None
    if isinstance(part.get("approve"), bool):
        return Answer(bool(part["approve"]), reason, call)
    decision = str(part.get("decision", "")).strip().lower()
    if decision in _YES:
        return Answer(True, reason, call)
    if decision in _NO:
        return Answer(False, reason, call)
    raise ServeInputError(f"the data part gives no decision ({sorted(part)}). {HOW_TO_ANSWER}", crew=crew)
