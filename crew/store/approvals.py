"""A paused run in the store: the calls it waits on, where their tasks stopped, the decisions made.

When a run ends paused, each waiting call gets a row in ``approvals`` with its task's
checkpoint (``crew.checkpoint.TaskCheckpoint`` as JSON, scrubbed of known secrets like
everything the store writes). ``crew approve`` (or ``Crew.resume(approvals=...)``) writes a
decision into the row; resuming reads the checkpoints and decisions back, so another
process, hours later, continues each task at the turn that asked, without a model call.
"""

from __future__ import annotations

import json
import time
from typing import Any

from crew.checkpoint import TaskCheckpoint
from crew.errors import StoreError
from crew.store.store import RunStore
from crew.tools.approval import Approval

__all__ = ["decide", "paused_state", "pending", "record_pause"]


def record_pause(store: RunStore, run_id: str, checkpoints: dict[str, Any], scrub: Any) -> None:
    """Store the waiting calls of a paused run and where their tasks stopped (one transaction)."""
    statements = []
    for checkpoint in checkpoints.values():
        saved = scrub.json(checkpoint.model_dump(mode="json"))
        for request in checkpoint.pending:
            statements.append(
                (
                    "INSERT OR REPLACE INTO approvals (run_id, call_id, task, agent, tool, args, checkpoint) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        run_id,
                        request.call_id,
                        checkpoint.task,
                        request.agent,
                        request.tool,
                        scrub.json(request.args),
                        saved,
                    ),
                )
            )
    if statements:
        store.transaction(statements)


def pending(store: RunStore, run_id: str) -> list[dict[str, Any]]:
    """The waiting calls of a run, decided or not, in the order they were stored."""
    rows = store._rows(
        "SELECT call_id, task, agent, tool, args, decision, reason, arguments FROM approvals WHERE run_id = ? "
        "ORDER BY rowid",
        (run_id,),
    )
    for row in rows:
        row["args"] = json.loads(row["args"]) if row["args"] else {}
    return rows


def decide(store: RunStore, run_id: str, call_id: str, approval: Approval) -> None:
    """Write a person's decision about ``call_id`` of the paused run ``run_id``."""
    calls = pending(store, run_id)
    if not any(row["call_id"] == call_id for row in calls):
        waiting = ", ".join(row["call_id"] for row in calls) or "none"
        raise StoreError(f"run {run_id[:12]} has no call {call_id!r} waiting for approval (waiting: {waiting})")
    arguments = json.dumps(approval.arguments) if approval.arguments is not None else None
    store.transaction(
        [
            (
                "UPDATE approvals SET decision = ?, reason = ?, arguments = ?, decided_at = ? "
                "WHERE run_id = ? AND call_id = ?",
                (approval.decision, approval.reason, arguments, time.time(), run_id, call_id),
            )
        ]
    )


def paused_state(store: RunStore, run_id: str) -> tuple[dict[str, TaskCheckpoint], dict[str, Approval]]:
    """The checkpoints (by task) and the decisions (by call id) a resume of ``run_id`` starts from."""
    rows = store._rows(
        "SELECT call_id, task, checkpoint, decision, reason, arguments FROM approvals WHERE run_id = ?", (run_id,)
    )
    checkpoints: dict[str, TaskCheckpoint] = {}
    decisions: dict[str, Approval] = {}
    for row in rows:
        if row["task"] not in checkpoints:
            checkpoints[row["task"]] = TaskCheckpoint.model_validate_json(row["checkpoint"])
        if row["decision"]:
            arguments = json.loads(row["arguments"]) if row["arguments"] else None
            decisions[row["call_id"]] = Approval(
                decision=row["decision"], reason=row["reason"] or "", arguments=arguments
            )
    return checkpoints, decisions
