"""A flow run recorded on the run store, and resumed or replayed from it.

``Flow.kickoff_async`` with a store (``Flow(store=...)`` or a ``store`` class attribute, as
``Crew(store=...)``) runs through :func:`recorded`: the run's row first, every step run as
it happens (``crew.store.flow_runs.FlowRecorder`` is the engine's observer), the final row
however the run ends. While it runs, a crew a step kicks off without a store of its own is
recorded in the same store as a child of the flow run (``crew.store.store.ambient``).

A resume builds a new run whose :class:`StoredJournal` hands on the outputs of the step runs
that finished, so the engine goes the same way (a router's stored label leads where it led)
without calling them, and runs the first step that did not finish, with the state as it was
after the last one that did.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any

from crew.errors import FlowError, FlowPaused, StoreError
from crew.flow.engine import Finished, FlowRun
from crew.flow.state import dump_state, load_state

if TYPE_CHECKING:  # (the flow itself is typed Any here: crew.flow.flow imports this module)
    from crew.store.flow_runs import FlowPlan
    from crew.store.records import StoredRun
    from crew.store.store import RunStore

__all__ = ["StoredJournal", "flow_hash", "flow_settings", "latest_unfinished", "recorded", "restore"]


class StoredJournal:
    """The finished step runs of a stored run, by (step, number)."""

    def __init__(self, finished: dict[tuple[str, int], Any], states: dict[tuple[str, int], Any] | None = None) -> None:
        self._finished = finished
        self._states = states or {}

    def finished(self, step: str, number: int) -> Finished | None:
        key = (step, number)
        return Finished(self._finished[key], self._states.get(key)) if key in self._finished else None


def flow_hash(cls: type) -> str:
    """What says two runs are of the same flow: its class, by import path (its code may change
    between a failed run and its resume: fixing the step that failed is the point)."""
    return f"flow:{getattr(cls, '__module__', None)}:{cls.__qualname__}"


def flow_settings(flow: Any) -> dict[str, Any]:
    """What a later process needs to load the flow again and start it as it started."""
    cls = type(flow)
    try:
        file = inspect.getsourcefile(cls)
    except TypeError:
        file = None
    where = {"module": getattr(cls, "__module__", None), "qualname": cls.__qualname__, "file": file}
    extra = getattr(flow, "run_settings", None) or {}  # what the caller keeps with the run (crew kickoff's options)
    budgets = {k: getattr(flow, k) for k in ("max_tokens", "max_cost") if getattr(flow, k, None) is not None}
    return {**extra, "flow": where, "state": dump_state(flow.state), "max_steps": flow.max_steps, **budgets}


async def recorded(
    flow: Any,
    run: FlowRun,
    store: RunStore,
    *,
    inputs: dict[str, Any],
    plan: FlowPlan | None = None,
    mode: str = "kickoff",
    folder: str | None = None,
) -> Any:
    """``flow``'s run ``run``, written to ``store`` from its first row to its last, whatever way it ends."""
    from crew.store.flow_runs import FlowRecorder
    from crew.store.store import ambient

    settings = flow_settings(flow)
    if plan is not None:  # a continuation starts as the run it continues started
        settings["state"] = plan.run.settings.get("state", settings["state"])
    recorder = FlowRecorder(
        store,
        run_id=run.run_id,
        flow=flow.flow_name,
        flow_hash=flow_hash(type(flow)),
        inputs=inputs,
        settings=settings,
        mode=mode,
        continued_from=None if plan is None else plan.run.id,
        from_step=None if plan is None else plan.from_step,
        folder=folder,
    )
    run.observer = recorder
    recorder.start()
    token = ambient.set(store)
    try:
        result = await flow._execute(run)  # pyright: ignore[reportPrivateUsage]
    except FlowPaused as exc:
        recorder.finish("paused", str(exc))
        raise
    except FlowError as exc:
        recorder.finish("failed", str(exc))
        raise
    except (asyncio.CancelledError, KeyboardInterrupt):
        recorder.finish("interrupted", "interrupted")
        raise
    except BaseException as exc:
        recorder.finish("failed", f"{type(exc).__name__}: {exc}")
        raise
    finally:
        ambient.reset(token)
    recorder.finish("done")
    return result


def restore(flow: Any, plan: FlowPlan) -> None:
    """Put the state a continuation starts from into ``flow``."""
    if plan.state is not None:
        flow._state = load_state(flow._state, plan.state, flow.flow_name)  # pyright: ignore[reportPrivateUsage]


def latest_unfinished(store: RunStore, cls: type) -> StoredRun:
    """The newest run of this flow that did not finish and that no later resume finished."""
    from crew.store.flow_runs import resumable

    for run in store.runs(crew_hash=flow_hash(cls)):
        if resumable(store, run):
            return run
    raise StoreError(f"no unfinished run of flow {cls.__qualname__} in {store.path} to resume (`crew runs` lists them)")
