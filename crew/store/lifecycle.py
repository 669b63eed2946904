"""Recording a kickoff in a run store, from start to end, whatever way it ends.

The store records and never drives: ``crew.run.kickoff`` runs every kickoff (here, or
in another process) and hands the store a recorder and the run's coroutine; this module
writes the run's row, each output as it exists, and the final row when the coroutine
ends, done, failed, paused or interrupted.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from os import PathLike
from typing import Any

from crew.errors import CrewRunError
from crew.run.continuation import FRESH, Continuation
from crew.store.recorder import RunRecorder
from crew.store.store import RunStore
from crew.tasks.output import CrewOutput, TaskOutput

_BUDGETS = ("max_tokens", "max_cost")


def open_store(store: Any) -> RunStore:
    """``store=`` of a Crew as a RunStore: a RunStore as it is, a path opened."""
    if isinstance(store, RunStore):
        return store
    if isinstance(store, (str, PathLike)):
        return RunStore(store)
    raise TypeError(f"store must be a path or a RunStore, got {type(store).__name__}")


def kept_store(opened: RunStore | None, store: Any) -> RunStore | None:
    """The store an owner's ``store=`` names, reusing ``opened`` while it is still that store.

    Crews and flows open their store on first use and keep it, so a run does not reopen the
    file per call; a ``store=`` changed since (another path, another RunStore) opens the new one.
    """
    if store is None:
        return None
    if opened is not None and (opened is store or str(opened.path) == str(store)):
        return opened
    return open_store(store)


def run_recorder(
    crew: Any,
    store: RunStore,
    inputs: Mapping[str, Any],
    *,
    run_id: str,
    continuation: Continuation = FRESH,
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
        mode=continuation.mode,
        continued_from=continuation.from_run,
        from_task=continuation.from_task,
        settings={**{k: v for k, v in (settings or {}).items() if k not in _BUDGETS}, **budgets},
        folder=folder,
        reused=continuation.outputs,
    )


def recording_first(recorder: RunRecorder, on_task_done: Callable[[TaskOutput], Any] | None) -> Callable[..., Any]:
    """The scheduler's ``on_task_done``: the output on disk before the user's hook or a dependant can fail."""

    async def done(out: TaskOutput) -> None:
        await recorder.task_done(out)
        if on_task_done is not None:
            result = on_task_done(out)
            if inspect.isawaitable(result):
                await result

    return done


async def outputs_recorded(recorder: RunRecorder, execute: Callable[[], Awaitable[CrewOutput]]) -> CrewOutput:
    """A run made elsewhere (a Ray worker): its task outputs recorded from the ``CrewOutput`` that comes back.

    Only what comes back is recorded, so a retried kickoff is recorded once; a failed
    run's partial output is recorded too.
    """
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


async def recorded(
    recorder: RunRecorder, body: Coroutine[Any, Any, CrewOutput], continued_from: str | None
) -> CrewOutput:
    """``body``'s output, the run's row written before it starts and its final row whatever way it ends."""
    try:
        recorder.start()
    except BaseException:
        body.close()  # never started: nothing to wait for, nothing to warn about
        raise
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
    await _finish(recorder, output)
    output.continued_from = continued_from
    return output


async def _finish(recorder: RunRecorder, output: CrewOutput) -> None:
    failed = any(o.status == "failed" for o in output.tasks_output)  # on_error="continue": resumable
    if output.status == "paused":  # tool calls wait for a person: stored so another process can go on
        from crew.store.approvals import record_pause

        record_pause(recorder.store, recorder.run_id, output.checkpoints, recorder.scrub)
        waiting = ", ".join(p.call_id for p in output.pending_approvals)
        recorder.finish("paused", output.usage, f"waits for approval of {waiting}")
    else:
        await recorder.finish_async("failed" if failed else "done", output.usage, "a task failed" if failed else None)
