"""The kickoffs a server runs: at most ``max_concurrency`` at once, each recorded, each streamed.

Every door (MCP, the HTTP API, A2A) starts a crew's run here, so they share one bound on
concurrent kickoffs and one way to run: ``crew.run.kickoff.kickoff`` (the one kickoff path,
as ``Crew.kickoff_async`` and ``crew kickoff`` take it) with the served crew's run store,
its budgets and limits as crew.yaml sets them, driven by ``crew.stream.drive.stream_run``
so the caller sees the run's typed events as they happen.

A caller that goes away (its request cancelled, its task cancelled at shutdown) cancels the
run: the stream closes, the scheduler cancels the tasks, the store marks the run
interrupted, and ``crew resume RUN`` continues it later without redoing finished tasks.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from crew.serve.served import ServedCrew
from crew.stream.events import StreamEvent

__all__ = ["EventSink", "Kickoffs"]

EventSink = Callable[[StreamEvent], Awaitable[None]]
"""What hears a run's events (progress notifications, server-sent events, A2A updates)."""


class Kickoffs:
    """The server's kickoffs: a bound on how many run at once, and the run ids of those running."""

    def __init__(self, max_concurrency: int = 4) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        self.max_concurrency = max_concurrency
        self._slots: asyncio.Semaphore | None = None
        self.running: dict[str, str] = {}
        """Run id -> crew name, while the run runs."""
        self.closing = False
        self._tasks: set[asyncio.Future[Any]] = set()

    async def run(
        self,
        served: ServedCrew,
        inputs: Mapping[str, Any],
        *,
        run_id: str | None = None,
        on_event: EventSink | None = None,
        approver: Any = None,
        resume: str | None = None,
        approvals: Mapping[Any, Any] | None = None,
    ) -> Any:
        """Run ``served`` once with checked ``inputs``; its ``CrewOutput`` (a failed run raises ``CrewRunError``).

        ``resume``: the id of a stored paused (or interrupted) run this run continues, its waiting
        calls decided by ``approvals`` (call id -> ``True``/``False``/``Approval``), as
        ``crew resume`` does; ``inputs`` are then the stored run's."""
        if self._slots is None:  # made on the server's own loop
            self._slots = asyncio.Semaphore(self.max_concurrency)
        run_id = run_id or uuid.uuid4().hex
        async with self._slots:
            if self.closing:
                raise asyncio.CancelledError("the server is shutting down")
            # The run is a task of its own, so that a shutdown can cancel every run and wait
            # for each to be recorded as interrupted, whoever is waiting for it.
            start = _resumed(served, resume, approvals, run_id, approver) if resume else None
            inner = asyncio.ensure_future(self._drive(served, inputs, run_id, on_event, approver, start))
            self._tasks.add(inner)
            try:
                return await asyncio.shield(inner)
            except asyncio.CancelledError:
                inner.cancel()
                await asyncio.wait([inner])
                raise
            finally:
                self._tasks.discard(inner)

    async def _drive(
        self,
        served: ServedCrew,
        inputs: Mapping[str, Any],
        run_id: str,
        on_event: EventSink | None,
        approver: Any,
        resumed: Callable[[], Awaitable[Any]] | None,
    ) -> Any:
        from crew.run.kickoff import kickoff
        from crew.stream.drive import stream_run

        crew: Any = served.fresh_crew(inputs) if resumed is None else None

        def fresh() -> Awaitable[Any]:
            return kickoff(
                crew,
                dict(inputs),
                run_id=run_id,
                store=served.store,
                settings=served.settings,
                folder=str(served.folder) if served.folder is not None else None,
                approver=approver,
            )

        self.running[run_id] = served.name
        try:
            async with contextlib.aclosing(stream_run(run_id, resumed or fresh)) as items:
                async for item in items:
                    if not isinstance(item, StreamEvent):
                        return item
                    if on_event is not None:
                        await on_event(item)
        finally:
            self.running.pop(run_id, None)
            if served.store is not None:  # a server lives on: what the run wrote is committed now, not later
                served.store.flush()
                _report_store_loss(run_id)
        raise RuntimeError("the run's stream ended without its output")  # stream_run always yields it

    async def cancel_all(self) -> int:
        """Cancel every running kickoff and wait until each is recorded (interrupted); how many there were."""
        self.closing = True
        tasks = [task for task in self._tasks if not task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        return len(tasks)


def _resumed(
    served: ServedCrew, run_id: str, approvals: Mapping[Any, Any] | None, new_run_id: str, approver: Any
) -> Callable[[], Awaitable[Any]]:
    """What starts the continuation of the stored run ``run_id`` (``crew resume``'s path, decisions given);
    ``StoreError`` at once when it cannot continue (no store, no such run, finished, continued already)."""
    from crew.errors import StoreError
    from crew.run.kickoff import kickoff
    from crew.store.approvals import paused_state
    from crew.store.continuation import plan_resume

    store = served.store
    if store is None:
        raise StoreError(f"crew '{served.name}' is served without a run store: a paused run cannot continue")
    stored = store.run(run_id)
    crew = served.fresh_crew(stored.inputs)
    plan = plan_resume(crew, store, stored.id, None)
    checkpoints, decisions = paused_state(store, plan.run.id, approvals, crew=crew)
    continuation = plan.continuation(checkpoints, decisions)

    def start() -> Awaitable[Any]:
        return kickoff(
            crew,
            plan.inputs,
            run_id=new_run_id,
            continuation=continuation,
            store=store,
            settings=plan.run.settings,
            folder=plan.run.folder,
            approver=approver,
        )

    return start


def _report_store_loss(run_id: str) -> None:
    """Say on stderr (the server's log) that the store could not record all of a run, and why."""
    import sys

    recorder = sys.modules.get("crew.store.recorder")
    message = getattr(recorder, "lost_writes", {}).pop(run_id, None)
    if message:
        from crew.common.secrets import scrub

        print(f"crew serve: run {run_id[:12]}: {scrub(message)}", file=sys.stderr, flush=True)
