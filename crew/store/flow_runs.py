"""A flow run on the run store: its row, a row per step run, and what a resume or replay reuses.

The flow's engine (``crew.flow.engine``) tells a :class:`FlowRecorder` about each step run
as it starts, finishes or fails; every finished step's output and the state after it are
committed before the steps it triggers start, so a crash never loses a finished step.
A crew a step kicks off records itself in the same store with ``parent_run``/``parent_step``
naming the flow run and step (``crew.store.store.ambient``, ``crew.store.recorder``).

:func:`plan_flow_resume` and :func:`plan_flow_replay` read a stored run back as a
:class:`FlowPlan`: the step runs that finished (by step and number: the 3rd run of a step in
a router loop is not the 1st) with their outputs, and the state to start from. A step's
output is stored as JSON; a pydantic model keeps its class, so it comes back as the model
(a ``CrewOutput`` as a ``CrewOutput``), anything else JSON cannot hold comes back as its text.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from crew.common.secrets import register_environment
from crew.common.usage import Usage
from crew.errors import StoreError
from crew.store.records import StoredRun, StoredStep
from crew.store.scrub import Scrubber, unseal
from crew.store.store import RunStore, recording

__all__ = [
    "FlowPlan",
    "FlowRecorder",
    "decode_output",
    "encode_output",
    "plan_flow_replay",
    "plan_flow_resume",
    "resumable",
]

_STEP_END = (
    "UPDATE flow_steps SET status = ?, reused = ?, output = ?, state = ?, error = ?, finished_at = ? "
    "WHERE run_id = ? AND step = ? AND number = ?"
)


def encode_output(value: Any) -> Any:
    """A step's output as JSON-able data; a pydantic model as ``{"model": "module:Class", "value": ...}``."""
    if isinstance(value, BaseModel):
        kind = type(value)
        return {"model": f"{kind.__module__}:{kind.__qualname__}", "value": value.model_dump(mode="json")}
    return value


def decode_output(stored: Any) -> Any:
    """What :func:`encode_output` made, back as it was (a model whose class is loaded in this process)."""
    if isinstance(stored, dict) and set(stored) == {"model", "value"} and isinstance(stored["model"], str):
        module, _, qualname = stored["model"].partition(":")
        kind: Any = sys.modules.get(module)  # only a module this process loaded: a store never makes one load
        for part in qualname.split("."):
            kind = getattr(kind, part, None)
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            return kind.model_validate(stored["value"])
        return stored["value"]
    return stored


class FlowRecorder:
    """Writes one flow run: ``start()``, a row per step run as the engine reports it, ``finish()``."""

    def __init__(
        self,
        store: RunStore,
        *,
        run_id: str,
        flow: str,
        flow_hash: str,
        inputs: Mapping[str, Any],
        settings: Mapping[str, Any],
        mode: str = "kickoff",
        continued_from: str | None = None,
        from_step: str | None = None,
        folder: str | None = None,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.flow = flow
        self.flow_hash = flow_hash
        self.inputs = dict(inputs)
        self.settings = dict(settings)
        self.mode = mode
        self.continued_from = continued_from
        self.from_step = from_step
        self.folder = folder
        register_environment()
        self.scrub = Scrubber()
        self._seq = 0

    def start(self) -> None:
        self.store.execute(
            "INSERT INTO runs (id, kind, crew, crew_hash, folder, inputs, settings, status, mode, continued_from, "
            "from_task, started_at, pid, host) VALUES (?, 'flow', ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?)",
            (
                self.run_id,
                self.flow,
                self.flow_hash,
                self.folder,
                self.scrub.json(self.inputs),
                self.scrub.json(self.settings),
                self.mode,
                self.continued_from,
                self.from_step,
                time.time(),
                os.getpid(),
                self.store.host,
            ),
        )
        recording.add(self.run_id)

    # -- the engine's observer ----------------------------------------------------------------

    def step_started(self, run: Any) -> None:
        self._seq += 1
        given = None if type(run.input) is object else self.scrub.json(encode_output(run.input))  # NO_INPUT: none
        self.store.execute(
            "INSERT OR REPLACE INTO flow_steps (run_id, step, number, seq, status, input, started_at) "
            "VALUES (?, ?, ?, ?, 'running', ?, ?)",
            (self.run_id, run.step, run.number, self._seq, given, run.started),
        )

    def step_done(self, run: Any, output: Any, state: dict[str, Any], *, reused: bool) -> None:
        if reused:  # handed on without running: its row is written here, once, as done
            self.step_started(run)
        self.store.execute(
            _STEP_END,
            (
                "done",
                int(reused),
                self.scrub.json(encode_output(output)),
                self.scrub.json(state),
                None,
                time.time(),
                self.run_id,
                *_key(run),
            ),
        )

    def step_failed(self, run: Any, error: BaseException, state: dict[str, Any], *, status: str = "failed") -> None:
        text = f"{type(error).__name__}: {error}"
        self.store.execute(
            _STEP_END,
            (status, 0, None, self.scrub.json(state), self.scrub.text(text), time.time(), self.run_id, *_key(run)),
        )

    def asked(self, call_id: str, step: str, question: str, held: dict[str, Any] | None = None) -> None:
        """A step asked a person (``Flow.ask``): the question waits in ``approvals`` for ``crew approve``.

        ``held``: what a ``@human_feedback`` step had done before it asked (its run's ``number``,
        its body's ``output``, the questions ``asked`` before), so that a resume does not run it again.
        """
        kept = {} if held is None else {**held, "output": encode_output(held.get("output"))}
        self.store.execute(
            "INSERT OR REPLACE INTO approvals (run_id, call_id, task, agent, tool, args, checkpoint) "
            "VALUES (?, ?, ?, NULL, 'ask', ?, ?)",
            (self.run_id, call_id, step, self.scrub.json({"question": question}), self.scrub.json(kept)),
        )

    # -- the end ----------------------------------------------------------------------------

    def finish(self, status: str, error: str | None = None) -> None:
        """The run's last row: how it ended, and what its crews spent (the flow's own usage)."""
        recording.discard(self.run_id)
        self.store.execute(
            "UPDATE flow_steps SET status = 'interrupted', finished_at = ? WHERE run_id = ? AND status = 'running'",
            (time.time(), self.run_id),
        )
        self.store.execute(
            "UPDATE runs SET status = ?, finished_at = ?, error = ?, "
            "(prompt_tokens, completion_tokens, total_tokens, requests, cost) = "
            "(SELECT COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), "
            "COALESCE(SUM(total_tokens), 0), COALESCE(SUM(requests), 0), COALESCE(SUM(cost), 0) "
            "FROM runs WHERE parent_run = ?) WHERE id = ?",
            (status, time.time(), self.scrub.text(error), self.run_id, self.run_id),
        )


def _key(run: Any) -> tuple[str, int]:
    return run.step, run.number


# -- reading a run back -------------------------------------------------------------------------


@dataclass
class FlowPlan:
    """What a resume or replay of a stored flow run starts from."""

    run: StoredRun
    finished: dict[tuple[str, int], Any] = field(default_factory=dict)
    """Outputs of the step runs that finished, by (step, number): handed on, not run again."""
    state: dict[str, Any] | None = None
    """The state after the last of them (None: the state the run started with)."""
    from_step: str | None = None
    answers: dict[str, str] = field(default_factory=dict)
    """A person's answers to the questions steps asked (``Flow.ask``), by question id."""
    held: dict[tuple[str, int], Any] = field(default_factory=dict)
    """By (step, number): what a ``@human_feedback`` step's body returned before it asked (not run again)."""
    spent_before: Usage = field(default_factory=Usage)
    """What the run and those it continued spent (a resume's budget covers them all; a replay's does not)."""
    states: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    """The state stored after each of the finished step runs, by (step, number)."""


def plan_flow_resume(store: RunStore, run: StoredRun) -> FlowPlan:
    """Continue ``run`` at its first unfinished step, with the state after its last finished one.

    Refused for a run that is still running, that finished, or whose work a later run
    (a resume of it, or of a resume of it) finished: a finished step never runs twice.
    """
    from crew.store.continuation import chain_usage

    _check_resumable(store, run)
    done = [s for s in store.steps(run.id) if s.status == "done"]
    answers, held = _answers(store, run)
    state = _last_state(done) or _initial_state(run)
    return FlowPlan(
        run,
        _outputs(done),
        state,
        answers=answers,
        held=held,
        spent_before=chain_usage(store, run),
        states=_states(done),
    )


def plan_flow_replay(store: RunStore, run: StoredRun, from_step: str) -> FlowPlan:
    """Rerun ``run`` from the first run of ``from_step``: the step runs that finished before it
    started are handed on, ``from_step`` and everything after it runs again."""
    steps = store.steps(run.id)
    first = next((s for s in steps if s.step == from_step), None)
    if first is None:
        ran = ", ".join(dict.fromkeys(s.step for s in steps)) or "none"
        raise StoreError(f"--from {from_step}: run {run.id[:12]} never ran a step '{from_step}' (its steps: {ran})")
    before = [
        s
        for s in steps
        if s.status == "done" and s.finished_at is not None and s.finished_at <= (first.started_at or 0.0)
    ]
    start = _last_state(before) or _initial_state(run)
    return FlowPlan(run, _outputs(before), start, from_step, states=_states(before))


def _answers(store: RunStore, run: StoredRun) -> tuple[dict[str, str], dict[tuple[str, int], Any]]:
    """The answers given to the questions of ``run`` and the runs it continued (a step that asked
    twice across two pauses runs again from its start, and needs both), and what the
    ``@human_feedback`` steps that asked them had returned. A question of ``run`` still
    unanswered refuses the resume: it would only ask again."""
    answers: dict[str, str] = {}
    held: dict[tuple[str, int], Any] = {}
    chain: list[str] = []
    current: str | None = run.id
    while current is not None and current not in chain:
        chain.append(current)
        current = store.run(current).continued_from
    for run_id in reversed(chain):  # the newest answer to a question wins
        rows = store._rows(  # pyright: ignore[reportPrivateUsage]
            "SELECT call_id, task, args, decision, arguments, checkpoint FROM approvals WHERE run_id = ? "
            "AND tool = 'ask' "
            "ORDER BY rowid",
            (run_id,),
        )
        for row in rows:
            kept = json.loads(row["checkpoint"] or "{}")
            if isinstance(kept, dict) and "number" in kept:  # a @human_feedback step's body, finished
                held[(str(row["task"]), int(kept["number"]))] = kept
            if row["decision"]:
                answers[row["call_id"]] = _answer(row)
            elif run_id == run.id:
                question = json.loads(row["args"] or "{}").get("question", "")
                raise StoreError(
                    f"run {run.id[:12]} waits for an answer to step '{row['task']}': {question!r}; answer with: "
                    f'crew approve {run.id[:12]} {row["call_id"]} --args \'{{"answer": "..."}}\''
                )
    return answers, held


def _answer(row: dict[str, Any]) -> str:
    """``--args '{"answer": ...}'`` gives the text; a bare approve is "yes", a deny "no"."""
    if row["decision"] == "edit" and row["arguments"]:
        given = json.loads(unseal(row["arguments"]))
        if isinstance(given, dict) and "answer" in given:
            return str(given["answer"])
        return json.dumps(given, ensure_ascii=False)
    return "no" if row["decision"] == "deny" else "yes"


def _outputs(steps: list[StoredStep]) -> dict[tuple[str, int], Any]:
    return {(s.step, s.number): decode_output(s.output) for s in steps}


def _states(steps: list[StoredStep]) -> dict[tuple[str, int], dict[str, Any]]:
    return {(s.step, s.number): s.state for s in steps if s.state is not None}


def _last_state(steps: list[StoredStep]) -> dict[str, Any] | None:
    ended = [s for s in steps if s.state is not None]
    return max(ended, key=lambda s: (s.finished_at or 0.0, s.seq)).state if ended else None


def _initial_state(run: StoredRun) -> dict[str, Any] | None:
    state = run.settings.get("state")
    return dict(state) if isinstance(state, dict) else None


def resumable(store: RunStore, run: StoredRun) -> bool:
    """Whether :func:`plan_flow_resume` would continue ``run``."""
    try:
        _check_resumable(store, run)
    except StoreError:
        return False
    return True


def _check_resumable(store: RunStore, run: StoredRun) -> None:
    short = run.id[:12]
    if run.kind != "flow":
        raise StoreError(f"run {short} is a crew's run, not a flow's")
    if run.status == "running" and run.host == store.host:
        raise StoreError(f"run {short} is still running (process {run.pid}): wait for it, or stop it first")
    if run.status == "done":
        raise StoreError(f"run {short} finished: nothing to resume (`crew replay {short} --from STEP` redoes part)")
    if run.status == "paused":
        from crew.store.approvals import continued_by

        later_run = continued_by(store, run.id)
        if later_run is not None:  # its answers were taken up there: continued twice, a step would act twice
            raise StoreError(
                f"run {short} was continued already by run {later_run.id[:12]} ({later_run.status}); a paused "
                f"run is continued once"
                + (f": go on from there: crew resume {later_run.id[:12]}" if later_run.status != "done" else "")
            )
    later = _finished_continuation(store, run.id)
    if later is not None:
        raise StoreError(
            f"run {short} was resumed already by run {later[:12]}, which finished: nothing is left to do "
            "(a finished step never runs twice)"
        )


def _finished_continuation(store: RunStore, run_id: str) -> str | None:
    """The id of a run that continued ``run_id`` (directly or through other continuations) and finished."""
    rows = store._rows("SELECT id, continued_from, status, mode FROM runs WHERE kind = 'flow'")  # pyright: ignore[reportPrivateUsage]
    below: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row["continued_from"]:
            below.setdefault(row["continued_from"], []).append(row)
    todo, seen = [run_id], {run_id}
    while todo:
        for row in below.get(todo.pop(), []):
            if row["mode"] != "resume" or row["id"] in seen:
                continue
            if row["status"] == "done":
                return str(row["id"])
            seen.add(row["id"])
            todo.append(row["id"])
    return None
