"""``Crew(backend="ray")``: every task of one graph runs as a Ray task.

The scheduler stays on the driver (it decides what is ready, records each output once
and calls ``on_task_done``); only the work of a task (condition, attempts, the agent,
guardrail) moves to a worker. What must hold for the whole run lives in one Ray actor
per run, the *ledger*: the usage counts of tools with a ``max_usage_count`` (a claim is
one actor call, so limits stay exact across workers) and the tool cache. Each such
call is a round trip to the actor (about a millisecond on one machine; see
benchmarks/ray_scaling.py); tools without a limit, and runs with ``cache=False``,
make none. ``output_file`` and callbacks run on the driver, where the user sees them.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from crew.backends.ray import (
    RayBackend,
    await_ref,
    connect,
    load_cloudpickle,
    load_ray,
    remote,
    worker_died,
    worker_lost,
)
from crew.backends.remote_events import RECORDED, TURNS, collected, replay, wanted
from crew.common.events import Event, bus, scoped
from crew.errors import ConfigError, TaskFailedError
from crew.run import context as context_providers
from crew.stream.events import AgentTurnStarted, TextDelta, ToolCallFinished, ToolCallStarted
from crew.tasks.output import TaskOutput
from crew.tools.execution.executor import ToolStats


class RunLedger:
    """The Ray actor holding one run's usage counts and cache. Its methods run one at a
    time (a sync actor), which is what makes a claim atomic across workers."""

    def __init__(self, cache: Any) -> None:
        from crew.tools.cache import InMemoryCache

        self.cache = InMemoryCache() if cache is True else cache or None
        self.used: dict[str, int] = {}

    def claim(self, tool_name: str, limit: int) -> bool:
        used = self.used.get(tool_name, 0)
        if used >= limit:
            return False
        self.used[tool_name] = used + 1
        return True

    def usage(self) -> dict[str, int]:
        return dict(self.used)

    def get(self, key: str) -> tuple[bool, Any]:
        return self.cache.get(key) if self.cache is not None else (False, None)

    def set(self, key: str, value: Any) -> None:
        if self.cache is not None:
            self.cache.set(key, value)

    def clear(self) -> None:
        if self.cache is not None:
            self.cache.clear()


class LedgerLimits:
    """A worker's ``UsageLimits``: claims go to the run's ledger actor."""

    def __init__(self, ledger: Any) -> None:
        self.ledger = ledger

    def claim(self, tool_name: str, limit: int) -> bool:
        return bool(load_ray().get(self.ledger.claim.remote(tool_name, limit)))


class LedgerCache:
    """A worker's ``CacheBackend``: the run's cache, in the ledger actor."""

    def __init__(self, ledger: Any) -> None:
        self.ledger = ledger

    def get(self, key: str) -> tuple[bool, Any]:
        return load_ray().get(self.ledger.get.remote(key))

    def set(self, key: str, value: Any) -> None:
        load_ray().get(self.ledger.set.remote(key, value))

    def clear(self) -> None:
        load_ray().get(self.ledger.clear.remote())


class TaskOutcome(BaseModel):
    """A task's output as the worker finished it (failed or not), and its tool statistics."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    output: TaskOutput
    failed: bool = False
    stats: dict[str, ToolStats] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    """The task's model and tool call events, replayed on the driver (its recorder writes them)."""


async def _accept(output: TaskOutput) -> str:
    return ""


def run_task_on_worker(
    task: Any,
    name: str,
    context: list[TaskOutput],
    run_id: str,
    llm: Any,
    ledger: Any,
    cached: bool,
    types: frozenset[str] = frozenset(),
    scopes: list[str] | None = None,
    sections: tuple[Any, ...] = (),
    relay: Callable[[Any], None] | None = None,
    started: Callable[[asyncio.AbstractEventLoop, asyncio.Task[Any]], None] | None = None,
) -> TaskOutcome:
    """The body of one graph task's Ray task: a TaskRunner of one task, on the run's ledger.

    ``sections`` are what the run's context providers (memory, knowledge) gave the task on the
    driver, for its prompt here; ``relay`` gets the task's stream events as they happen (see
    ``stream_task_on_worker``); ``started`` the loop and asyncio task the work runs as, for a
    caller in another thread to cancel.
    """
    from crew.run.task_runner import TaskRunner
    from crew.tools.execution.executor import ToolExecutor

    executor = ToolExecutor(cache=LedgerCache(ledger) if cached else False, run_id=run_id, limits=LedgerLimits(ledger))
    # the driver's scopes: a different tool of a taken name stays apart in the ledger's cache and limits
    executor.register(_task_tools(task), buckets=scopes)
    from crew.agent.scope import RunScope

    scope = RunScope(run_id=run_id, executor=executor, llm=llm, human_feedback=_accept)
    scope.sections[name] = tuple(sections)  # the worker has no providers: its runner asks none
    if relay is not None:
        from crew.stream.listen import Listener

        Listener(_Relay(relay)).attach(scope)  # the driver makes the task's own events; these it cannot
    runner = TaskRunner({name: task}, scope)
    with collected(run_id, types, task=name) as events, scoped(run_id=run_id):  # its model calls name the run

        async def work() -> TaskOutput:
            if started is not None:
                started(asyncio.get_running_loop(), asyncio.current_task())  # type: ignore[arg-type]
            return await runner(name, context)

        try:
            output = asyncio.run(work())
        except TaskFailedError as exc:
            return TaskOutcome(output=exc.output, failed=True, stats=executor.stats, events=events)
        return TaskOutcome(output=output, stats=executor.stats, events=events)


def _task_tools(task: Any) -> list[Any]:
    """A task's tools, its agent's first, in one order on the driver and on the worker."""
    from crew.tools.execution.registry import as_tools

    return as_tools([*(task.agent.tools if task.agent is not None else ()), *(task.tools or ())])


_RELAYED = (AgentTurnStarted, ToolCallStarted, ToolCallFinished, TextDelta)
"""A reply's last text comes through ``put`` (the tail the secret scrubber held back), the rest
through ``put_delta``."""


class _Relay:
    """Where a worker's stream ``Listener`` writes: what only the worker sees (model turns, text,
    tool calls) goes to ``send``; the task's start and end the driver announces itself."""

    def __init__(self, send: Callable[[Any], None]) -> None:
        self.send = send

    def put(self, item: Any) -> None:
        if isinstance(item, _RELAYED):
            self.send(item)

    def put_delta(self, item: Any) -> None:
        self.send(item)


_DONE = object()


def stream_task_on_worker(*arguments: Any) -> Iterator[Any]:
    """``run_task_on_worker(*arguments)`` as a Ray streaming generator, for a run someone streams: lists
    of the task's stream events as they happen (a model's text piece by piece), then its ``TaskOutcome``.

    The task runs on a thread of its own; this generator hands over whatever it made since
    the last batch, so a fast model's many small pieces cost one Ray object per batch.
    """
    made: queue.SimpleQueue[Any] = queue.SimpleQueue()
    ended: list[Any] = []
    running: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = []
    stop = threading.Event()

    def started(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
        running.append((loop, task))
        if stop.is_set():  # cancelled before the work began: it ends at its first await
            task.cancel()

    def work() -> None:
        try:
            ended.append(run_task_on_worker(*arguments, relay=made.put, started=started))
        except BaseException as exc:  # noqa: BLE001 - raised below, in the generator Ray runs
            ended.append(exc)
        finally:
            made.put(_DONE)

    thread = threading.Thread(target=work, name="crew-task", daemon=True)
    thread.start()
    try:
        while True:
            batch = [_next(made)]
            while True:
                try:
                    batch.append(made.get_nowait())
                except queue.Empty:
                    break
            finished = batch[-1] is _DONE
            batch = [event for event in batch if event is not _DONE]
            if batch:
                yield batch
            if finished:
                break
    except BaseException:  # cancelled (the driver's reader left: ``ray.cancel``) or closed: the task stops too
        stop.set()
        for loop, task in running:
            with contextlib.suppress(RuntimeError):  # its loop has ended already
                loop.call_soon_threadsafe(task.cancel)
        thread.join(5)  # let it unwind (its model call, its async tools); a stuck sync tool runs on
        raise
    if isinstance(ended[0], BaseException):
        raise ended[0]
    yield ended[0]


def _next(made: queue.SimpleQueue[Any]) -> Any:
    """The next item, waking every 50 ms meanwhile: Ray cancels a task by interrupting its main thread
    (``_thread.interrupt_main``), which takes effect only when that thread runs Python again."""
    while True:
        try:
            return made.get(timeout=0.05)
        except queue.Empty:
            continue


class RayTaskRunner:
    """Stands in for the run's ``TaskRunner`` in the scheduler: each call is a Ray task."""

    def __init__(self, inner: Any, crew: Any, backend: RayBackend) -> None:
        if inner.worker is not None or inner.delegation:
            raise ConfigError(
                "backend='ray' runs each task as a Ray task, but the hierarchical process and "
                "allow_delegation need every agent in one process: use backend='local' for this crew"
            )
        asking = [name for name, task in inner.tasks.items() if task.human_input]
        if asking:
            raise ConfigError(
                f"task '{asking[0]}' has human_input, which backend='ray' cannot ask: use backend='local'"
            )
        for name, task in inner.tasks.items():
            waiting = next((t for t in _task_tools(task) if t.requires_approval), None)
            if waiting is not None:  # a worker has no one to ask, and a paused worker cannot be resumed
                raise ConfigError(
                    f"task '{name}' can call tool '{waiting.name}', which requires approval; "
                    "backend='ray' cannot ask for it or pause the run: use backend='local'"
                )
        self.inner = inner
        self.crew = crew
        self.backend = backend
        self.label = inner.label
        self.ledger: Any = None
        self._ready = asyncio.Lock()

    async def _start(self) -> None:
        async with self._ready:
            if self.ledger is not None:
                return
            ray = load_ray()
            self.backend.started = connect(self.backend.address, self.backend.num_cpus) or self.backend.started
            cache = self.crew.cache
            self.ledger = ray.remote(RunLedger).options(num_cpus=0).remote(cache if cache is not True else True)

    async def __call__(self, name: str, context: list[TaskOutput]) -> TaskOutput:
        await self._start()
        inner = self.inner
        scope = inner.scope
        task = inner.tasks[name]
        shipped = task.model_copy(update={"callback": None, "output_file": None})
        options = {"max_retries": self.backend.max_retries, "retry_exceptions": False, **self.backend.task_options}
        started = time.time()
        bus.emit("task.start", run_id=scope.run_id, task=name, agent=inner.label(name).get("agent"), backend="ray")
        sections = await context_providers.gather(scope, name, task, task.agent)  # memory, knowledge: here
        arguments = (
            *(shipped, name, context, scope.run_id, scope.llm, self.ledger, self.crew.cache is not False),
            wanted((RECORDED | TURNS) - {"task.start"}),  # the driver says when its task starts
            [scope.executor.bucket_of(tool) for tool in _task_tools(task)],
            sections,
        )
        live = scope.relayed  # someone streams the run: the worker sends its events as they happen
        ref = None if live else remote(run_task_on_worker).options(**options).remote(*arguments)
        if live:
            outcome = await self._streamed(arguments, options, name, scope)
        else:
            outcome = await await_ref(ref, what=f"task '{name}'", retries=self.backend.max_retries)
        replay(outcome.events)  # the attempt that came back: its calls are recorded once, here
        scope.executor.add_stats(outcome.stats)
        out = outcome.output
        scope.meter.ledger.add(name, out.agent, out.model, out.usage)  # the worker's spend, in the run's one ledger
        if outcome.failed:
            raise TaskFailedError(out)
        try:
            if task.output_file:
                from crew.run.task_runner import write_output_file

                await asyncio.to_thread(write_output_file, task.output_file, out)
            for callback in (task.callback, scope.task_callback):
                if callback is not None:
                    result = callback(out)
                    if asyncio.iscoroutine(result):
                        await result
            await context_providers.task_done(scope, name, task, task.agent, out)  # memory remembers it here
            out = out.model_copy(update={"usage": scope.meter.ledger.for_task(name)})  # and analyze's call
        except Exception as exc:  # the task failed on the driver's side of it
            failed = out.model_copy(
                update={"status": "failed", "error": f"{type(exc).__name__}: {exc}", "finished_at": time.time()}
            )
            raise TaskFailedError(failed) from exc
        return out if out.started_at else out.model_copy(update={"started_at": started})

    async def _streamed(
        self, arguments: tuple[Any, ...], options: dict[str, Any], name: str, scope: Any
    ) -> TaskOutcome:
        """The task as a Ray streaming generator, its batches of events relayed to the run's stream.

        A lost worker is retried here, as a new generator, rather than by Ray: Ray's retry of a
        generator skips as many items as the dead attempt sent, and batches differ from attempt
        to attempt, so it would drop a live attempt's events (and even its outcome).
        """
        retries = options.get("max_retries", 0)
        generator = remote(stream_task_on_worker).options(**{**options, "max_retries": 0}, num_returns="streaming")
        lost: BaseException | None = None
        for _ in range(retries + 1):
            try:
                return await self._relayed(generator.remote(*arguments), name, scope)
            except worker_lost() as exc:
                lost = exc
        assert lost is not None  # the loop ran at least once, and every pass that did not return lost a worker
        raise worker_died(f"task '{name}'", retries, lost) from None

    async def _relayed(self, stream: Any, name: str, scope: Any) -> TaskOutcome:
        """Relay one attempt's batches as they come; its last item is the outcome."""
        outcome: Any = None
        try:
            async for ref in stream:
                outcome = await ref
                if isinstance(outcome, list):
                    await scope.relay(outcome)
        except asyncio.CancelledError:
            load_ray().cancel(stream)
            raise
        if not isinstance(outcome, TaskOutcome):
            raise TypeError(f"task '{name}': the Ray worker's stream ended without the task's outcome")
        return outcome


def task_runner_for(backend: Any, inner: Any, crew: Any) -> Any:
    """The scheduler's ``run_task`` for ``Crew(backend=...)``: the TaskRunner itself for "local"."""
    if backend is None or backend == "local":
        return inner
    if backend == "ray":
        backend = RayBackend()
    if isinstance(backend, RayBackend):
        from crew.backends.shipping import check_shippable, register_local_modules

        cloudpickle = load_cloudpickle()  # Ray not installed, a tool that cannot travel: said before anything runs
        register_local_modules(crew, cloudpickle.register_pickle_by_value)
        check_shippable(crew, cloudpickle.dumps)
        return RayTaskRunner(inner, crew, backend)
    raise ConfigError(f"unknown backend {backend!r}: use 'local' or 'ray' (or a RayBackend with options)")
