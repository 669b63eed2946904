"""Resume and replay: which stored outputs a new run may reuse, and when it may not.

A stored output is reused only while its task's definition is unchanged (see
``crew.store.hashing``); otherwise the new run is refused, naming the task, rather
than quietly building on work done for another question.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crew.common.usage import Usage
from crew.errors import StoreError
from crew.run.continuation import Continuation
from crew.store.hashing import task_hashes
from crew.store.records import StoredRun, StoredTask
from crew.store.store import RunStore
from crew.tasks.graph import task_names
from crew.tasks.output import TaskOutput
from crew.tools.approval import DecisionKey


@dataclass
class Plan:
    """What a resume or replay starts from: the run, its inputs, the outputs to reuse, the tasks to run."""

    run: StoredRun
    inputs: dict[str, Any]
    outputs: dict[str, TaskOutput]
    rerun: list[str]
    spent_before: Usage = field(default_factory=Usage)
    from_task: str | None = None
    """The task a replay reruns from; None for a resume."""
    sections: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    """By task name, what memory and knowledge gave its prompt in the run continued: shown again."""

    def continuation(
        self, checkpoints: Mapping[str, Any] | None = None, approvals: Mapping[DecisionKey, Any] | None = None
    ) -> Continuation:
        """The kickoff's view of this plan; ``checkpoints`` and ``approvals`` go on with a paused run's tasks."""
        return Continuation(
            outputs=self.outputs,
            from_run=self.run.id,
            from_task=self.from_task,
            spent_before=self.spent_before,
            checkpoints=checkpoints or {},
            approvals=approvals or {},
            sections=self.sections,
        )


def plan_resume(crew: Any, store: RunStore, run_id: str | None = None, inputs: Mapping[str, Any] | None = None) -> Plan:
    """Continue ``run_id`` (default: the latest unfinished run): rerun every task without a stored output."""
    run = store.run(run_id) if run_id is not None else store.latest_unfinished()
    if run.status == "running" and run.host == store.host:
        raise StoreError(f"run {run.id[:12]} is still running (process {run.pid}): wait for it, or stop it first")
    if run.status == "done":
        raise StoreError(
            f"run {run.id[:12]} finished: nothing to resume (`crew replay {run.id[:12]} --from TASK` redoes part of it)"
        )
    return _plan(crew, store, run, inputs, rerun_from=None)


def plan_replay(
    crew: Any, store: RunStore, run_id: str | None, from_task: str, inputs: Mapping[str, Any] | None = None
) -> Plan:
    """Rerun ``from_task`` and everything downstream of it; reuse the stored outputs of the others."""
    return _plan(crew, store, store.run(run_id), inputs, rerun_from=from_task)


def _plan(
    crew: Any, store: RunStore, run: StoredRun, inputs: Mapping[str, Any] | None, *, rerun_from: str | None
) -> Plan:
    merged = {**run.inputs, **(inputs or {})}
    names = task_names(crew.tasks)
    rerun = _rerun(crew, names, rerun_from)
    hashes = task_hashes(crew, merged)
    stored = {task.name: task for task in store.tasks(run.id)}
    by_name = dict(zip(names, crew.tasks, strict=True))
    outputs: dict[str, TaskOutput] = {}
    for name in names:
        task = stored.get(name)
        if name in rerun or task is None or task.status != "done" or task.output is None:
            continue
        if task.def_hash != hashes[name]:
            raise _changed(run, name, rerun_from)
        outputs[name] = _restore(task, by_name[name])
    spent = chain_usage(store, run) if rerun_from is None else Usage()
    rerun_names = [n for n in names if n not in outputs]
    started = [n for n in rerun_names if n in stored and stored[n].status != "pending"]
    return Plan(run, merged, outputs, rerun_names, spent, rerun_from, _sections(store, run, started))


def _sections(store: RunStore, run: StoredRun, started: list[str]) -> dict[str, tuple[Any, ...]]:
    """The recorded context sections of the tasks that run again and had started in ``run``: they
    recall what they recalled then (nothing, when nothing was recorded), not what memory holds now."""
    from crew.agent.context import PromptSection

    found: dict[str, list[PromptSection]] = {name: [] for name in started}
    for row in store.context(run.id):
        if row.task in found:
            found[row.task].append(PromptSection.from_record(row.model_dump()))
    return {name: tuple(sections) for name, sections in found.items()}


def _rerun(crew: Any, names: list[str], rerun_from: str | None) -> set[str]:
    """The tasks a replay reruns: ``rerun_from`` and everything downstream of it (none for a resume)."""
    if rerun_from is None:
        return set()
    if rerun_from not in names:
        raise StoreError(f"no task '{rerun_from}' in crew '{crew.name}' (its tasks: {', '.join(names)})")
    return {rerun_from} | crew.validate_graph().descendants(rerun_from)


def _changed(run: StoredRun, name: str, rerun_from: str | None) -> StoreError:
    what = "resume" if rerun_from is None else "replay"
    return StoreError(
        f"cannot {what} run {run.id[:12]}: task '{name}' changed since that run (its description, "
        "expected output, agent, tools, context or output schema, or the inputs filled into them), "
        f"so its stored output no longer fits; `crew kickoff` starts afresh"
        + ("" if rerun_from is not None else f", `crew replay {run.id[:12]} --from {name}` redoes it")
    )


def _restore(stored: StoredTask, task: Any) -> TaskOutput:
    """The stored output, its structured value rebuilt as the task's model."""
    document = dict(stored.output or {})
    model = task.output_pydantic
    if model is not None and isinstance(document.get("pydantic"), dict):
        document["pydantic"] = model.model_validate(document["pydantic"])
    return TaskOutput.model_validate(document)


def chain_usage(store: RunStore, run: StoredRun) -> Usage:
    """What ``run`` and the runs it continued spent: a resumed run's budget covers them all."""
    total, seen = Usage(), set()
    current: StoredRun | None = run
    while current is not None and current.id not in seen:
        seen.add(current.id)
        total = total + current.usage
        current = store.run(current.continued_from) if current.continued_from else None
    return total
