"""The batch runner: one kickoff per inputs mapping, on any backend, results as they finish.

It owns what is the same whatever runs the kickoffs: the inputs are all checked before
anything starts, at most ``max_concurrency`` kickoffs run at once, each result is
recorded exactly once by the driver (this process), ``on_error`` decides whether one
failure stops the batch, and ``max_tokens`` / ``max_cost`` stop new kickoffs once the
finished ones have spent that much.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from typing import Any, Literal

from crew.backends.base import Backend, BatchStatus, KickoffResult
from crew.backends.collector import spaced_collections
from crew.common.usage import Usage
from crew.errors import CrewError
from crew.tasks.inputs import as_inputs, fill_inputs
from crew.tasks.interpolate import placeholders
from crew.tasks.output import CrewOutput

OnError = Literal["continue", "stop"]


def check_inputs(crew: Any, inputs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every inputs mapping as a dict, each checked against the crew's placeholders.

    The first bad one raises, with ``index`` (its position) set on the error, before any
    kickoff has started.
    """
    if isinstance(inputs, (Mapping, str)):
        raise TypeError(
            "kickoff_for_each takes a list of inputs mappings, one per kickoff; "
            "for a single set of inputs call kickoff(inputs)"
        )
    agents, tasks = crew.all_agents(with_manager=True), list(crew.tasks)
    needed = _needed_inputs(agents, tasks)
    checked: list[dict[str, Any]] = []
    for i, item in enumerate(inputs):
        try:
            checked.append(as_inputs(item))
            if needed is None or not needed.issubset(checked[-1]):  # the full fill says what is wrong
                fill_inputs(agents, tasks, checked[-1])
        except Exception as exc:
            exc.index = i  # type: ignore[attr-defined]
            raise
    return checked


def _needed_inputs(agents: Sequence[Any], tasks: Sequence[Any]) -> set[str] | None:
    """The placeholders of every text the kickoff fills, when having them all is all a fill checks;
    None when an output path takes inputs (their values decide whether it stays in its folder).

    Filling copies of every agent and task for each of thousands of inputs only to check
    them cost as much as a tenth of a batch's own work; the kickoff fills them again anyway.
    """
    from crew.agent.agent import Agent
    from crew.tasks.task import Task

    if any(type(a).interpolate is not Agent.interpolate for a in agents):  # fills what it likes
        return None
    if any(
        type(t).interpolate is not Task.interpolate or (t.output_file and placeholders(t.output_file)) for t in tasks
    ):
        return None
    texts = [text for a in agents for text in (a.role, a.goal, a.backstory)]
    texts += [text for t in tasks for text in (t.description, t.expected_output)]
    return {name for text in texts for name in placeholders(text)}


def resolve_backend(backend: str | Backend | None, **options: Any) -> Backend:
    """``"local"`` (default), ``"ray"`` (options: ``address``, ``num_cpus``, ...), or a Backend object."""
    if backend is None or backend == "local":
        from crew.backends.local import LocalBackend

        return LocalBackend()
    if backend == "ray":
        from crew.backends.ray import RayBackend

        return RayBackend(**options)
    if isinstance(backend, Backend):
        return backend
    raise ValueError(f"unknown backend {backend!r}: use 'local' or 'ray' (or a Backend object)")


async def for_each(
    crew: Any,
    inputs: Sequence[Mapping[str, Any]],
    *,
    backend: str | Backend | None = "local",
    max_concurrency: int = 4,
    on_error: OnError = "continue",
    ordered: bool = False,
    max_tokens: int | None = None,
    max_cost: float | None = None,
    status: BatchStatus | None = None,
) -> AsyncGenerator[KickoffResult, None]:
    """Kick ``crew`` off once per inputs mapping; yield each ``KickoffResult`` as it finishes.

    Every input gets exactly one result: "done", "failed", "paused" (a tool call waits for
    approval), "cancelled" (running when the batch stopped) or "skipped" (not started: the
    batch stopped, or its budget was spent; running kickoffs finish, so a budget can be
    passed by what they spend). ``ordered`` yields in input order (holding back results
    that finish early). ``status`` is kept up to date for a progress view. Use it under
    ``contextlib.aclosing`` when you may stop reading early: closing cancels what still runs.
    """
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
    if on_error not in ("continue", "stop"):
        raise ValueError(f"on_error must be 'continue' or 'stop', got {on_error!r}")
    checked = check_inputs(crew, inputs)
    state = status if status is not None else BatchStatus()
    state.total = len(checked)
    if not checked:
        return
    runner = resolve_backend(backend)
    await runner.open(crew)
    batch = _Batch(runner, crew, checked, state, max_concurrency, on_error, ordered, (max_tokens, max_cost))
    try:
        with spaced_collections(min(max_concurrency, len(checked))):
            async with aclosing(batch.results()) as results:
                async for result in results:
                    yield result
    finally:
        await batch.close()


class _Batch:
    """One batch's bookkeeping: inputs waiting, kickoffs running, results held back for ``ordered``."""

    def __init__(
        self,
        runner: Backend,
        crew: Any,
        checked: list[dict[str, Any]],
        state: BatchStatus,
        max_concurrency: int,
        on_error: OnError,
        ordered: bool,
        budget: tuple[int | None, float | None],
    ) -> None:
        self.runner, self.crew, self.checked, self.state = runner, crew, checked, state
        self.max_concurrency, self.on_error, self.ordered, self.budget = max_concurrency, on_error, ordered, budget
        self.waiting = list(range(len(checked)))[::-1]  # a stack: pop() takes the lowest index
        self.running: dict[asyncio.Task[KickoffResult], int] = {}
        self.held: dict[int, KickoffResult] = {}
        self.next_index = 0
        # Finished kickoffs, as their done callbacks hand them in: waiting on the whole running set
        # (asyncio.wait) costs a callback on every running task per wake-up, quadratic in a big batch.
        self.finished: asyncio.Queue[asyncio.Task[KickoffResult]] = asyncio.Queue()

    async def results(self) -> AsyncGenerator[KickoffResult, None]:
        """Every input's result, as each is known (in input order when ``ordered``)."""
        state, running = self.state, self.running
        while self.waiting or running:
            if not self._start():
                break
            for task in sorted(await self._finished(), key=running.__getitem__):
                del running[task]
                state.running = len(running)
                for ready in self._settle(task.result()):
                    yield ready
            if state.stopped is not None and self.on_error == "stop" and running and state.failed:
                for ready in await self._cancel_running():
                    yield ready
            state.running = len(running)
        for ready in self._skip_waiting():
            yield ready

    async def _finished(self) -> list[asyncio.Task[KickoffResult]]:
        """The kickoffs that finished since the last look (at least one), still counted as running."""
        finished = [await self.finished.get()]
        while not self.finished.empty():
            finished.append(self.finished.get_nowait())
        return [task for task in finished if task in self.running]

    def _start(self) -> bool:
        """Start kickoffs while slots are free and nothing stopped the batch; True while any runs."""
        waiting, running, state = self.waiting, self.running, self.state
        while waiting and len(running) < self.max_concurrency and state.stopped is None:
            index = waiting.pop()
            task = asyncio.ensure_future(_one(self.runner, self.crew, index, self.checked[index]))
            task.add_done_callback(self.finished.put_nowait)
            running[task] = index
        state.running = len(running)
        return bool(running)

    async def _cancel_running(self) -> list[KickoffResult]:
        """on_error="stop" after a failure: what still runs is cancelled, and says so."""
        running = self.running
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        released: list[KickoffResult] = []
        for index in sorted(running.values()):
            error = f"stopped: {self.state.stopped}"
            released += self._settle(
                KickoffResult(index=index, status="cancelled", inputs=self.checked[index], error=error)
            )
        running.clear()
        return released

    def _skip_waiting(self) -> list[KickoffResult]:
        """Inputs never started (the batch stopped, or its budget was spent): skipped, saying why."""
        released: list[KickoffResult] = []
        for index in sorted(self.waiting):
            error = f"not started: {self.state.stopped}"
            released += self._settle(
                KickoffResult(index=index, status="skipped", inputs=self.checked[index], error=error)
            )
        self.waiting.clear()
        return released

    def _settle(self, result: KickoffResult) -> list[KickoffResult]:
        """Count ``result``; return the results it releases (itself, or a run of held ones when ``ordered``)."""
        state = self.state
        setattr(state, result.status, getattr(state, result.status) + 1)
        state.usage = state.usage + result.usage
        if result.status == "failed" and self.on_error == "stop" and state.stopped is None:
            state.stopped = f"input {result.index} failed: {result.error}"
        if state.stopped is None:
            state.stopped = _over_budget(state.usage, *self.budget)
        if not self.ordered:
            return [result]
        self.held[result.index] = result
        out = []
        while self.next_index in self.held:
            out.append(self.held.pop(self.next_index))
            self.next_index += 1
        return out

    async def close(self) -> None:
        """Cancel what still runs (the reader left early, or Ctrl-C), then close the backend."""
        for task in self.running:
            task.cancel()
        if self.running:
            await asyncio.gather(*self.running, return_exceptions=True)
        self.state.running = 0
        await self.runner.close()


async def _one(runner: Backend, crew: Any, index: int, inputs: dict[str, Any]) -> KickoffResult:
    """One kickoff as a result; only cancellation propagates."""
    run_id = uuid.uuid4().hex
    started = time.perf_counter()
    try:
        out = await runner.kickoff(crew, inputs, run_id=run_id)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of one input is that input's result
        exc.index = index  # type: ignore[attr-defined]
        partial = getattr(exc, "output", None)
        partial = partial if isinstance(partial, CrewOutput) else None
        message = str(exc) if isinstance(exc, CrewError) else f"{type(exc).__name__}: {exc}"
        result = KickoffResult(
            index=index,
            status="failed",
            inputs=inputs,
            run_id=run_id,
            error=message,
            usage=partial.usage if partial is not None else Usage(),
            duration=time.perf_counter() - started,
            output=partial,
        )
        result._exception = exc
        return result
    failed = [t for t in out.tasks_output if t.status == "failed"]  # a crew with on_error="continue"
    return KickoffResult(
        index=index,
        status=out.status,
        inputs=inputs,
        run_id=out.run_id or run_id,
        error="; ".join(f"task '{t.name}' failed: {t.error}" for t in failed) or None,
        raw=out.raw,
        usage=out.usage,
        duration=time.perf_counter() - started,
        output=out,
    )


def _over_budget(spent: Usage, max_tokens: int | None, max_cost: float | None) -> str | None:
    if max_tokens is not None and spent.total_tokens >= max_tokens:
        return f"the batch budget of {max_tokens:,} tokens is spent ({spent.total_tokens:,} used)"
    if max_cost is not None and spent.cost >= max_cost:
        return f"the batch budget of ${max_cost:.4f} is spent (${spent.cost:.4f} used)"
    return None


async def outputs_for_each(crew: Any, inputs: Sequence[Mapping[str, Any]], **options: Any) -> list[CrewOutput]:
    """``Crew.kickoff_for_each``: every output in input order, or the first failure raised
    (with ``index`` set) once the others are cancelled."""
    outputs: dict[int, CrewOutput] = {}
    # The first kickoff that raised is raised here, and leaving the block cancels the others. One
    # that returned with a failed task (a crew with on_error="continue") is an output, as from kickoff.
    async with aclosing(for_each(crew, inputs, on_error="continue", **options)) as results:
        async for result in results:
            if result.exception is not None or result.output is None:
                raise result.exception or CrewError(result.error or "kickoff failed")
            outputs[result.index] = result.output
    return [outputs[i] for i in range(len(outputs))]
