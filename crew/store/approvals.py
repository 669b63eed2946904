"""A paused run in the store: the calls it waits on, where their tasks stopped, the decisions made.

When a run ends paused, each waiting call gets a row in ``approvals`` with its task's
checkpoint (``crew.agent.checkpoint.TaskCheckpoint`` as JSON). ``crew approve`` (or
``Crew.resume(approvals=...)``) writes a decision into the row; resuming reads the checkpoints
and decisions back, so another process, hours later, continues each task at the turn that
asked, without a model call. A paused run is continued once: its approved calls run once,
and a second resume is refused, naming the run that continued it.

What is shown (``args``, a denial's reason) is scrubbed like everything the store writes;
what will run (the checkpoint, edited arguments) is *sealed* (``crew.store.scrub.seal``):
its secrets are written as references the resuming process resolves from the same
environment and model keys, so the call runs with the arguments the model asked for and
the person approved, never with ``***``.

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
from crew.store.records import StoredRun
from crew.store.scrub import Scrubber, masked, scrubber_for, seal, sealed_secrets, unseal
from crew.store.store import RunStore
from crew.tools.approval import Approval, DecisionKey, check_decision_keys

__all__ = [
    "AmbiguousCall",
    "check_not_continued",
    "decide",
    "find_call",
    "paused_state",
    "pending",
    "record_pause",
]


def record_pause(store: RunStore, run_id: str, checkpoints: dict[str, Any], scrub: Scrubber) -> None:
    """Store the waiting calls of a paused run and where their tasks stopped (one transaction)."""
    statements = []
    for checkpoint in checkpoints.values():
        saved = scrub.sealed_json(checkpoint.model_dump(mode="json"))
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
    """The waiting calls of a run, decided or not, in the order they were stored (as they are shown)."""
    rows = store._rows(
        "SELECT call_id, task, agent, tool, args, decision, reason, arguments, decided_at FROM approvals "
        "WHERE run_id = ? ORDER BY rowid",
        (run_id,),
    )
    for row in rows:
        row["args"] = json.loads(row["args"]) if row["args"] else {}
        row["arguments"] = json.loads(masked(row["arguments"])) if row["arguments"] else None
    return rows


def continued_by(store: RunStore, run_id: str) -> StoredRun | None:
    """The newest run that continued ``run_id``, if any."""
    later = store._rows(
        "SELECT id FROM runs WHERE continued_from = ? ORDER BY started_at DESC, rowid DESC LIMIT 1", (run_id,)
    )
    return store.run(later[0]["id"]) if later else None


def check_not_continued(store: RunStore, run_id: str) -> None:
    """Refuse to continue a paused run a second time: its approved calls ran in the first continuation.

    Continued twice, a paused run would carry out its approvals twice (a destructive tool run
    twice); what is left to do is the continuing run's, so the error names it.
    """
    if not store._rows("SELECT 1 FROM approvals WHERE run_id = ? LIMIT 1", (run_id,)):
        return  # it never paused: resuming a failed run again is allowed
    later = continued_by(store, run_id)
    if later is None:
        return
    run, newest = run_id[:12], later.id[:12]
    if later.status in ("done", "running"):
        then = "nothing is left to do" if later.status == "done" else "it is still running"
    else:
        then = f"go on from there: crew resume {newest}"
    raise StoreError(
        f"run {run} was continued already by run {newest} ({later.status}); a paused run is continued once, "
        f"so its approved calls run once: {then}"
    )


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
    """Write a person's decision about ``call_id`` of the paused run ``run_id``; returns its row as it was
    before (its ``decision`` is the one this replaces, if any).

    ``task`` picks the call when calls of several tasks share the id (see :func:`find_call`).
    The reason is scrubbed (it is only told); edited arguments are sealed (they will run).

    The write holds only if the row is still as it was read (its ``decided_at``): of two
    decisions made at the same moment (two ``crew approve`` at once), one is written and
    the other fails with a :class:`StoreError` naming the decision that won, so neither
    person believes theirs replaced nothing.
    """
    row = find_call(pending(store, run_id), run_id, call_id, task)
    arguments = seal(json.dumps(approval.arguments, ensure_ascii=False)) if approval.arguments is not None else None
    reason = Scrubber().text(approval.reason)
    written = store.transaction(
        [],
        only_if=(
            "UPDATE approvals SET decision = ?, reason = ?, arguments = ?, decided_at = ? "
            "WHERE run_id = ? AND task = ? AND call_id = ? AND decided_at IS ?",
            (approval.decision, reason, arguments, time.time(), run_id, row["task"], call_id, row["decided_at"]),
        ),
    )
    if not written:
        now = find_call(pending(store, run_id), run_id, call_id, row["task"])
        raise StoreError(
            f"call {call_id!r} of run {run_id[:12]} was decided by someone else at the same moment "
            f"({now['decision'] or 'undecided'}); nothing was written: look with crew show {run_id[:12]}, "
            "and decide again to replace it"
        )
    return row


def paused_state(
    store: RunStore, run_id: str, approvals: Mapping[DecisionKey, Any] | None = None, *, crew: Any = None
) -> tuple[dict[str, TaskCheckpoint], dict[DecisionKey, Any]]:
    """The checkpoints (by task) and the decisions a resume of ``run_id`` starts from.

    The decisions are those stored (``crew approve``) with ``approvals`` (``resume``'s,
    keyed by call id or ``(task, call id)``) over them. Each is filed under its call id when
    no other task of the run waits on that id, else under ``(task, call id)``
    (:data:`~crew.tools.approval.DecisionKey`), so the executor gives each task its own.
    A key of ``approvals`` naming no waiting call, or an id several tasks share without its
    task (:class:`~crew.tools.approval.AmbiguousCall`), is an error: a decision meant for a
    call must not be lost, nor land on another. So is a run continued already
    (:func:`check_not_continued`), and a call to run whose arguments hold a secret this
    process does not know (``crew``: the crew that resumes, whose model keys count as known).
    """
    check_not_continued(store, run_id)
    if crew is not None:
        scrubber_for(crew)
    rows = store._rows(
        "SELECT call_id, task, checkpoint, decision, reason, arguments FROM approvals WHERE run_id = ? ORDER BY rowid",
        (run_id,),
    )
    checkpoints: dict[str, TaskCheckpoint] = {}
    tasks_of: dict[str, list[str]] = {}
    for row in rows:
        if row["task"] not in checkpoints:
            checkpoints[row["task"]] = TaskCheckpoint.model_validate_json(unseal(row["checkpoint"]))
        tasks_of.setdefault(row["call_id"], []).append(row["task"])
    keys = _Keys(run_id, rows, tasks_of)
    decisions = {keys.of(row["task"], row["call_id"]): _stored_decision(row) for row in rows if row["decision"]}
    given = approvals or {}
    check_decision_keys(given, [p for checkpoint in checkpoints.values() for p in checkpoint.pending])
    for name, decision in given.items():
        decisions[keys.given(name)] = decision
    _check_resolved(run_id, checkpoints, decisions, keys)
    return checkpoints, decisions


class _Keys:
    """Where a decision is filed: its call id alone when only one task waits on that id."""

    def __init__(self, run_id: str, rows: list[dict[str, Any]], tasks_of: dict[str, list[str]]) -> None:
        self.run_id, self.rows, self.tasks_of = run_id, rows, tasks_of

    def of(self, task: str, call_id: str) -> DecisionKey:
        return call_id if len(self.tasks_of[call_id]) == 1 else (task, call_id)

    def given(self, name: DecisionKey) -> DecisionKey:
        """The key of a decision ``resume`` was given, checked against what waits."""
        task, call_id = name if isinstance(name, tuple) else (None, name)
        if call_id not in self.tasks_of or (task is not None and task not in self.tasks_of[call_id]):
            where = f"call {call_id!r}" if task is None else f"call {call_id!r} in task {task!r}"
            waiting = ", ".join(f"{row['call_id']} (task {row['task']!r})" for row in self.rows) or "none"
            raise StoreError(
                f"approvals: run {self.run_id[:12]} has no {where} waiting for approval (waiting: {waiting})"
            )
        return self.of(task or self.tasks_of[call_id][0], call_id)


def _stored_decision(row: dict[str, Any]) -> Approval:
    arguments = json.loads(unseal(row["arguments"])) if row["arguments"] else None
    return Approval(decision=row["decision"], reason=row["reason"] or "", arguments=arguments)


def _check_resolved(
    run_id: str, checkpoints: dict[str, TaskCheckpoint], decisions: dict[DecisionKey, Any], keys: _Keys
) -> None:
    """Refuse to run a call whose arguments (as run) still hold a secret reference nobody resolved.

    The paused process knew the secret (its environment, a model's key) and this one does
    not: running the call would send ``***`` where the model asked for the value.
    """
    for checkpoint in checkpoints.values():
        for request in checkpoint.pending:
            decision = _as_approval(decisions.get(keys.of(checkpoint.task, request.call_id)))
            if decision is not None and decision.decision == "deny":
                continue
            ran = decision.arguments if decision is not None and decision.decision == "edit" else request.args
            if sealed_secrets(ran):
                raise StoreError(
                    f"call {request.call_id} ({request.tool}) of run {run_id[:12]} holds a secret this process does "
                    "not know (the paused run's environment or model key): set it as it was, deny the call, or "
                    f"give its arguments: crew approve {run_id[:12]} {request.call_id} --args JSON"
                )


def _as_approval(value: Any) -> Approval | None:
    try:
        return Approval.of(value)
    except TypeError:
        return None  # the executor says what is wrong with it, as for any approver's answer


def _names(tasks: list[str]) -> str:
    return ", ".join(repr(task) for task in tasks)
