"""A kickoff with a run store: record it from start to end, whatever way it ends.

Kickoff, resume and replay all come through :func:`recorded_kickoff`; the last two
only differ in the outputs they reuse and in what they say they continued.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import Awaitable, Callable, Mapping
from os import PathLike
from typing import Any

from crew.common.usage import Usage
from crew.errors import CrewRunError
from crew.store.recorder import RunRecorder
from crew.store.store import RunStore
from crew.tasks.output import CrewOutput, TaskOutput
from crew.tools.approval import DecisionKey

_BUDGETS = ("max_tokens", "max_cost")


def open_store(store: Any) -> RunStore:
    """``store=`` of a Crew as a RunStore: a RunStore as it is, a path opened."""
    if isinstance(store, RunStore):
        return store
    if isinstance(store, (str, PathLike)):
        return RunStore(store)
    raise TypeError(f"store must be a path or a RunStore, got {type(store).__name__}")


def run_recorder(
    crew: Any,
    store: RunStore,
    inputs: Mapping[str, Any],
    *,
    run_id: str,
    reused: Mapping[str, TaskOutput] | None = None,
    mode: str = "kickoff",
    continued_from: str | None = None,
    from_task: str | None = None,
    settings: Mapping[str, Any] | None = None,
    folder: str | None = None,
) -> RunRecorder:
    """The recorder of one kickoff of ``crew`` (its budgets kept with the run's settings)."""
    budgets = {k: getattr(crew, k) for k in _BUDGETS if getattr(crew, k) is not None}
    return RunRecorder(
        store,
        crew,
        run_id=run_id,
        inputs=inputs,
        mode=mode,
        continued_from=continued_from,
        from_task=from_task,
        settings={**{k: v for k, v in (settings or {}).items() if k not in _BUDGETS}, **budgets},
        folder=folder,
        reused=reused,
    )


async def recorded_kickoff(
    crew: Any,
    store: RunStore,
    inputs: Mapping[str, Any],
    *,
    run_id: str | None = None,
    precomputed: Mapping[str, TaskOutput] | None = None,
    on_task_done: Callable[[TaskOutput], Any] | None = None,
    mode: str = "kickoff",
    continued_from: str | None = None,
    from_task: str | None = None,
    settings: Mapping[str, Any] | None = None,
    folder: str | None = None,
    spent_before: Usage | None = None,
    approver: Any = None,
    approvals: Mapping[DecisionKey, Any] | None = None,
    checkpoints: Mapping[str, Any] | None = None,
) -> CrewOutput:
    """Run ``crew`` once, recorded in ``store``; ``precomputed`` outputs count as done (reused).

    ``approver``, ``approvals`` and ``checkpoints`` are ``Crew.kickoff_async``'s; a run that
    ends paused stores its waiting calls and checkpoints (``crew.store.approvals``).
    """
    from crew.run.budget import Budget
    from crew.run.kickoff import CrewRun

    crew._prewarm()
    run_id = run_id or uuid.uuid4().hex
    budget = Budget.of(crew, spent_before=spent_before, continued_from=continued_from)
    reused = {name: out.model_copy(update={"usage": Usage()}) for name, out in (precomputed or {}).items()}
    recorder = run_recorder(
        crew,
        store,
        inputs,
        run_id=run_id,
        reused=reused,
        mode=mode,
        continued_from=continued_from,
        from_task=from_task,
        settings=settings,
        folder=folder,
    )
    run = CrewRun(crew, dict(inputs), run_id=run_id, budget=budget)
    recorder.start()

    async def done(out: TaskOutput) -> None:
        recorder.on_task_done(out)  # first: on disk before the user's hook or a dependant can fail
        if on_task_done is not None:
            result = on_task_done(out)
            if inspect.isawaitable(result):
                await result

    execution = run.execute(
        precomputed=reused, on_task_done=done, approver=approver, approvals=approvals, checkpoints=checkpoints
    )
    output = await _finished(recorder, execution, continued_from)
    output.continued_from = continued_from
    return output


async def recorded_elsewhere(
    crew: Any,
    store: RunStore,
    inputs: Mapping[str, Any],
    *,
    run_id: str,
    execute: Callable[[], Awaitable[CrewOutput]],
) -> CrewOutput:
    """A kickoff that runs in another process (a Ray worker), recorded here by the driver.

    The run's row is written before ``execute`` starts it; ``execute`` replays the worker's
    events on this process's bus before it returns (the recorder writes their model and
    tool calls); the task outputs come from the ``CrewOutput`` that comes back, failed
    or not. Only what comes back is recorded, so a retried kickoff is recorded once.
    """
    recorder = run_recorder(crew, store, inputs, run_id=run_id)
    recorder.start()

    async def body() -> CrewOutput:
        try:
            output = await execute()
        except CrewRunError as exc:
            if isinstance(exc.output, CrewOutput):
                for out in exc.output.tasks_output:
                    recorder.on_task_done(out)
            raise
        for out in output.tasks_output:
            recorder.on_task_done(out)
        return output

    return await _finished(recorder, body(), None)


async def _finished(recorder: RunRecorder, body: Awaitable[CrewOutput], continued_from: str | None) -> CrewOutput:
    """``body``'s output, the run's final row written whatever way it ends."""
    try:
        output = await body
    except CrewRunError as exc:
        usage = exc.output.usage if isinstance(exc.output, CrewOutput) else None
        recorder.finish("failed", usage, str(exc))
        if isinstance(exc.output, CrewOutput):
            exc.output.continued_from = continued_from
        raise
    except (asyncio.CancelledError, KeyboardInterrupt):
        recorder.finish("interrupted", None, "interrupted")
        raise
    except BaseException as exc:
        recorder.finish("failed", None, f"{type(exc).__name__}: {exc}")
        raise
    failed = any(o.status == "failed" for o in output.tasks_output)  # on_error="continue": resumable
    if output.status == "paused":  # tool calls wait for a person: stored so another process can go on
        from crew.store.approvals import record_pause

        record_pause(recorder.store, recorder.run_id, output.checkpoints, recorder.scrub)
        waiting = ", ".join(p.call_id for p in output.pending_approvals)
        recorder.finish("paused", output.usage, f"waits for approval of {waiting}")
    else:
        recorder.finish("failed" if failed else "done", output.usage, "a task failed" if failed else None)
    return output
