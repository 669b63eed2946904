"""A paused run in the store: the calls it waits on, where their tasks stopped, the decisions made.

When a run ends paused, each waiting call gets a row in ``approvals`` with its task's
checkpoint (``crew.agent.checkpoint.TaskCheckpoint`` as JSON, scrubbed of known secrets like
everything the store writes). ``crew approve`` (or ``Crew.resume(approvals=...)``) writes a
decision into the row; resuming reads the checkpoints and decisions back, so another
process, hours later, continues each task at the turn that asked, without a model call.

A row is keyed by its run, its task *and* its call id: ids are only unique within one
conversation (a model may number its calls ``call_0``, ``call_1`` in each), so two tasks
of a run can wait on calls with the same id. Such an id alone does not say which call a
decision is for: it is refused (:class:`AmbiguousCall`) until the task is named too, and
the decision is handed to the resumed run filed under ``(task, call id)``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from crew.agent.checkpoint import TaskCheckpoint
from crew.errors import AmbiguousCall, StoreError
from crew.store.store import RunStore
from crew.tools.approval import Approval, DecisionKey, check_decision_keys

__all__ = ["AmbiguousCall", "decide", "find_call", "paused_state", "pending", "record_pause"]


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


def find_call(rows: list[dict[str, Any]], run_id: str, call_id: str, task: str | None = None) -> dict[str, Any]:
    """The row of ``rows`` (a run's :func:`pending` calls) that ``call_id`` (and ``task``) name.

    ``task`` may be left out when the id is the run's only call of that id; when calls of
    several tasks share it, leaving it out raises :class:`AmbiguousCall` (listing them), as
    a guess could approve a call the person never looked at.
    """
    run = run_id[:12]
    matches = [row for row in rows if row["call_id"] == call_id]
    if not matches:
        waiting = ", ".join(row["call_id"] for row in rows) or "none"
        raise StoreError(f"run {run} has no call {call_id!r} waiting for approval (waiting: {waiting})")
    tasks = [row["task"] for row in matches]
    if task is not None:
        for row in matches:
            if row["task"] == task:
                return row
        noun = "task" if len(tasks) == 1 else "tasks"
        raise StoreError(f"call {call_id!r} of run {run} waits in {noun} {_names(tasks)}, not in task {task!r}")
    if len(matches) > 1:
        raise AmbiguousCall(
            f"calls of {len(tasks)} tasks of run {run} share the id {call_id!r} ({_names(tasks)}): "
            "name the task of the one you mean",
            call_id=call_id,
            tasks=tasks,
        )
    return matches[0]


def decide(
    store: RunStore, run_id: str, call_id: str, approval: Approval, *, task: str | None = None
) -> dict[str, Any]:
    """Write a person's decision about ``call_id`` of the paused run ``run_id``; returns its row.

    ``task`` picks the call when calls of several tasks share the id (see :func:`find_call`).
    """
    row = find_call(pending(store, run_id), run_id, call_id, task)
    arguments = json.dumps(approval.arguments) if approval.arguments is not None else None
    store.transaction(
        [
            (
                "UPDATE approvals SET decision = ?, reason = ?, arguments = ?, decided_at = ? "
                "WHERE run_id = ? AND task = ? AND call_id = ?",
                (approval.decision, approval.reason, arguments, time.time(), run_id, row["task"], call_id),
            )
        ]
    )
    return row


def paused_state(
    store: RunStore, run_id: str, approvals: Mapping[DecisionKey, Any] | None = None
) -> tuple[dict[str, TaskCheckpoint], dict[DecisionKey, Any]]:
    """The checkpoints (by task) and the decisions a resume of ``run_id`` starts from.

    The decisions are those stored (``crew approve``) with ``approvals`` (``resume``'s,
    keyed by call id or ``(task, call id)``) over them. Each is filed under its call id when
    no other task of the run waits on that id, else under ``(task, call id)``
    (:data:`~crew.tools.approval.DecisionKey`), so the executor gives each task its own.
    A key of ``approvals`` naming no waiting call, or an id several tasks share without its
    task (:class:`~crew.tools.approval.AmbiguousCall`), is an error: a decision meant for a
    call must not be lost, nor land on another.
    """
    rows = store._rows(
        "SELECT call_id, task, checkpoint, decision, reason, arguments FROM approvals WHERE run_id = ? ORDER BY rowid",
        (run_id,),
    )
    checkpoints: dict[str, TaskCheckpoint] = {}
    tasks_of: dict[str, list[str]] = {}
    for row in rows:
        if row["task"] not in checkpoints:
            checkpoints[row["task"]] = TaskCheckpoint.model_validate_json(row["checkpoint"])
        tasks_of.setdefault(row["call_id"], []).append(row["task"])

    def key(task: str, call_id: str) -> DecisionKey:
        return call_id if len(tasks_of[call_id]) == 1 else (task, call_id)

    decisions: dict[DecisionKey, Any] = {}
    for row in rows:
        if row["decision"]:
            arguments = json.loads(row["arguments"]) if row["arguments"] else None
            decisions[key(row["task"], row["call_id"])] = Approval(
                decision=row["decision"], reason=row["reason"] or "", arguments=arguments
            )
    given = approvals or {}
    check_decision_keys(given, [p for checkpoint in checkpoints.values() for p in checkpoint.pending])
    for name, decision in given.items():
        task, call_id = name if isinstance(name, tuple) else (None, name)
        if call_id not in tasks_of or (task is not None and task not in tasks_of[call_id]):
            where = f"call {call_id!r}" if task is None else f"call {call_id!r} in task {task!r}"
            waiting = ", ".join(f"{row['call_id']} (task {row['task']!r})" for row in rows) or "none"
            raise StoreError(f"approvals: run {run_id[:12]} has no {where} waiting for approval (waiting: {waiting})")
        decisions[key(task or tasks_of[call_id][0], call_id)] = decision
    return checkpoints, decisions


def _names(tasks: list[str]) -> str:
    return ", ".join(repr(task) for task in tasks)
