"""Crew: agents plus tasks plus a process, and the kickoff entry points.

A ``Crew`` is a reusable declaration. Each kickoff builds its own run: filled-in copies
of the tasks and agents, one ``ToolExecutor``, one scheduler. Nothing of a run is kept
on the crew, so kickoffs never share usage counts or outputs, and two crews (or two
kickoffs of one crew) can run at the same time in one process.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationInfo, field_validator, model_validator

from crew.agent.agent import Agent
from crew.common.keywords import knowledge_sources_only, known_keys
from crew.errors import ConfigError
from crew.tasks.graph import TaskGraph
from crew.tasks.inputs import as_inputs
from crew.tasks.output import CrewOutput, TaskOutput
from crew.tasks.task import Task
from crew.tools.approval import DecisionKey


class Process(StrEnum):
    """How tasks are ordered and who performs them."""

    sequential = "sequential"
    """Tasks run in declared order (consecutive ``async_execution`` tasks side by side)."""
    graph = "graph"
    """Only ``context`` edges order tasks; independent tasks run at the same time."""
    hierarchical = "hierarchical"
    """Declared order; a manager agent performs each task by delegating to the agents."""


class Crew(BaseModel):
    """A team of agents and the tasks they work through.

    ``max_concurrency`` bounds the tasks running at once (graph process, async tasks);
    ``on_error`` is "stop" (cancel the run and raise ``CrewRunError`` carrying the
    partial output) or "continue" (run whatever does not depend on a failure).
    ``llm`` is the model for agents that have none (and for the manager when no
    ``manager_llm``/``manager_agent`` is given); ``max_rpm`` caps the requests per
    minute of the whole crew, across its kickoffs. ``human_feedback`` answers tasks
    with ``human_input`` (default: ask on the terminal, accept when there is none).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    agents: list[Agent] = Field(default_factory=list)
    tasks: list[Task]
    process: Process = Process.sequential
    manager_llm: Any = None
    manager_agent: Agent | None = None
    max_concurrency: int = Field(default=8, ge=1)
    cache: Any = True
    max_rpm: int | None = Field(default=None, gt=0)
    on_error: Literal["stop", "continue"] = "stop"
    step_callback: Callable[..., Any] | None = None
    task_callback: Callable[[TaskOutput], Any] | None = None
    human_feedback: Callable[[TaskOutput], Any] | None = None
    verbose: bool = False
    approver: Callable[..., Any] | None = None
    """Decides tool calls that require approval (docs/approvals.md); None: such a call pauses the run."""
    llm: Any = None
    name: str = "crew"
    description: str = ""
    """What the crew does, in a sentence: ``crew serve`` describes the crew's tool (or skill) with it."""
    store: Any = Field(default=None, description="a RunStore or the path of one: record every kickoff there")
    max_tokens: int | None = Field(default=None, gt=0, description="budget: total tokens a run may spend")
    max_cost: float | None = Field(default=None, gt=0, description="budget: USD a run may spend")
    backend: Any = "local"
    knowledge_sources: list[Any] = Field(
        default_factory=list,
        repr=False,
        exclude=True,
        description="knowledge sources (crew.knowledge) every agent reads",
    )
    knowledge_folder: Path | None = Field(
        default=None, description="where relative knowledge paths resolve (default: ./knowledge)"
    )
    """Where the tasks of a kickoff run: "local" (this event loop) or "ray" (each task a Ray
    task; a ``crew.backends.RayBackend(...)`` for an address or options). See docs/scaling.md."""

    memory: Any = None
    """What the crew remembers across runs (docs/memory.md): ``True``, a ``Memory(...)``, or a mapping
    of ``path``, ``embedder``, ``limit``, ``analyze``, ``scope``; checked into ``MemorySettings``."""
    embedder: Any = None
    """The embedder of the crew's memory when ``memory`` names none (CrewAI's key): a model name,
    a mapping, or ``"none"``; default: the offline one."""
    context_providers: list[Any] = Field(default_factory=list)
    """``crew.agent.context.ContextProvider``s each task's prompt asks before the task starts, after
    the crew's memory (docs/memory.md)."""

    _limiter: Any = PrivateAttr(default=None)
    _store: Any = PrivateAttr(default=None)
    _memory: Any = PrivateAttr(default=None)

    @field_validator("agents", "tasks", mode="before")
    @classmethod
    def _a_list(cls, value: Any, info: ValidationInfo) -> Any:
        """One agent or task where a list belongs: pydantic would read its fields as the list's items."""
        if isinstance(value, Agent | Task):
            field = info.field_name
            raise ValueError(f"{field} takes a list: wrap the one {type(value).__name__} in one, {field}=[...]")
        return value

    @field_validator("cache")
    @classmethod
    def _cache_backend(cls, value: Any) -> Any:
        """Checked here, not at the first kickoff, where it would fail far from where it was written."""
        from crew.tools.cache import CacheBackend

        if value is None or isinstance(value, bool | CacheBackend):
            return value
        shown = f"{type(value).__name__} {value!r}"[:80]
        raise ValueError(
            f"cache must be true (in memory), false, or a backend with get/set/clear such as "
            f"SQLiteCache('cache.db'), not {shown}"
        )

    @field_validator("knowledge_sources", mode="before")
    @classmethod
    def _knowledge_sources(cls, value: Any) -> Any:
        return knowledge_sources_only(value)

    @field_validator("memory")
    @classmethod
    def _memory_settings(cls, value: Any) -> Any:
        from crew.memory.settings import parse

        return parse(value)

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: Any) -> Any:
        if value in ("local", "ray") or getattr(value, "name", None) in ("local", "ray"):
            return value
        raise ValueError("backend must be 'local' or 'ray' (or a crew.RayBackend(...) with options)")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        return known_keys("crew", cls, data)

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> Crew:
        """Structural checks (no model needed), then the litellm prewarm.

        A crew that needs a real model starts importing litellm (seconds of CPU) in the
        background as soon as it is built, so a server's first kickoff does not pay for it.
        Tools that only inspect a crew (``crew validate``) build it with
        ``Crew.model_validate(fields, context={"prewarm": False})``; kickoff prewarms anyway.
        """
        if not self.tasks:
            raise ConfigError("a crew needs at least one task")
        # models are checked at kickoff, not here: a crew must load (``crew validate``) without one
        if self.process == Process.hierarchical and not [a for a in self.all_agents() if a is not self.manager_agent]:
            raise ConfigError(
                "the hierarchical process needs agents for the manager to delegate to: "
                "give the crew agents=[...] (the manager_agent does not count)"
            )
        self.validate_graph()
        from crew.memory.settings import for_agents

        if (agents_memory := for_agents(self.memory, self.all_agents())) is not self.memory:
            self.memory = agents_memory
        if (info.context or {}).get("prewarm", True):
            from crew.run.warmup import prewarm

            prewarm(self)
        return self

    @property
    def limiter(self) -> Any:
        """The crew's request budget (``max_rpm``), kept across kickoffs; rebuilt when ``max_rpm`` changes.

        Built on first use rather than in the validator, so ``crew.max_rpm = 1`` set after
        construction counts.
        """
        if self.max_rpm is None:
            return None
        if self._limiter is None or self._limiter.rate != self.max_rpm:
            from crew.models.ratelimit import RateLimiter

            self._limiter = RateLimiter(self.max_rpm, 60.0)
        return self._limiter

    # -- inspection ----------------------------------------------------------------------

    def validate_graph(self) -> TaskGraph:
        """Build and check the task graph (cycles, unknown context tasks, tasks without agent)."""
        return TaskGraph.from_tasks(
            self.tasks,
            sequential=self.process != Process.graph,
            require_agents=self.process != Process.hierarchical,
        )

    def all_agents(self, *, with_manager: bool = False) -> list[Any]:
        """The crew's agents followed by any agent only named by a task, without repeats;
        ``with_manager`` adds the ``manager_agent`` at the end (a run fills its texts too)."""
        seen: dict[int, Any] = {}
        for agent in [*self.agents, *(t.agent for t in self.tasks)]:
            if agent is not None:
                seen.setdefault(id(agent), agent)
        manager = [self.manager_agent] if with_manager and self.manager_agent is not None else []
        return [*seen.values(), *manager]

    # -- kickoff -------------------------------------------------------------------------

    def kickoff(self, inputs: Mapping[str, Any] | None = None, **options: Any) -> CrewOutput:
        """Run the crew and return its output (blocking).

        Called from inside a running event loop (a notebook, an async web handler), the
        run happens on a worker thread with its own loop and the caller's thread waits
        for it: it works, but it blocks that loop — use ``await kickoff_async()`` there.
        """
        return _run_sync(lambda: self.kickoff_async(inputs, **options))

    async def kickoff_async(
        self,
        inputs: Mapping[str, Any] | None = None,
        *,
        precomputed: Mapping[str, TaskOutput] | None = None,
        on_task_done: Callable[[TaskOutput], Any] | None = None,
        run_id: str | None = None,
        approver: Callable[..., Any] | None = None,
        approvals: Mapping[DecisionKey, Any] | None = None,
        checkpoints: Mapping[str, Any] | None = None,
    ) -> CrewOutput:
        """Run the crew on the current event loop.

        ``precomputed`` (resume): outputs by task name that count as done and are not
        rerun. ``on_task_done`` is called with every task's output the moment it exists.
        ``approver`` (default: the crew's) decides tool calls that require approval;
        ``approvals`` (decisions by call id, or by ``(task, call id)`` when calls of several
        tasks share an id) and ``checkpoints`` (by task name) continue a paused run's tasks
        where they stopped (docs/approvals.md).
        """
        from crew.run.continuation import Continuation
        from crew.run.kickoff import kickoff

        given = Continuation(outputs=precomputed or {}, checkpoints=checkpoints or {}, approvals=approvals or {})
        return await kickoff(
            self, as_inputs(inputs), run_id=run_id, continuation=given, on_task_done=on_task_done, approver=approver
        )

    # -- streaming -----------------------------------------------------------------------

    def astream(
        self, inputs: Mapping[str, Any] | None = None, *, buffer: int = 256, run_id: str | None = None, **options: Any
    ) -> AsyncGenerator[Any, None]:
        """Run the crew, yielding typed events as it goes (``crew.stream``), then its ``CrewOutput``.

        ``buffer`` events are held for a slow reader before model text waits for it; other
        events never wait. Leaving the loop early cancels the run (docs/streaming.md).
        ``options`` are those of :meth:`kickoff_async`. A failed run raises after its events.
        """
        from crew.stream.drive import stream_run

        run_id = run_id or uuid.uuid4().hex
        start = lambda: self.kickoff_async(inputs, run_id=run_id, **options)  # noqa: E731
        return stream_run(run_id, start, buffer=buffer)

    def stream(
        self, inputs: Mapping[str, Any] | None = None, *, buffer: int = 256, run_id: str | None = None, **options: Any
    ) -> Iterator[Any]:
        """The sync twin of :meth:`astream`: the run happens on a loop in a worker thread."""
        from crew.stream.drive import iterate_sync

        return iterate_sync(lambda: self.astream(inputs, buffer=buffer, run_id=run_id, **options))

    # -- the run store ---------------------------------------------------------------------

    def all_context_providers(self, store_path: Any = None) -> list[Any]:
        """The providers a kickoff's tasks ask, in order: the crew's memory, then ``context_providers``.

        ``store_path``: the run store's file, beside which the memory file lives by default.
        """
        memory = self.open_memory(store_path)
        if memory is None:
            return [*self.context_providers]
        from crew.memory.provider import MemoryProvider

        return [MemoryProvider(memory, self.memory), *self.context_providers]

    def open_memory(self, store_path: Any = None) -> Any:
        """The crew's ``Memory`` (opened once, then kept), or None without ``memory=``.

        Its file: ``memory.path``, else ``memory.db`` beside the run store, else ``.crew/memory.db``.
        """
        settings = self.memory
        if settings is None:
            return None
        if settings.memory is not None:
            return settings.memory
        from crew.memory.memory import Memory

        path = self.memory_path(store_path)
        if self._memory is None or Path(self._memory.path) != Path(path):
            embedder = settings.embedder if settings.embedder != "default" or self.embedder is None else self.embedder
            self._memory = Memory(path, embedder)
        return self._memory

    def memory_path(self, store_path: Any = None) -> Path:
        """The memory file: ``memory.path``, else ``memory.db`` beside the run store, else ``.crew/memory.db``."""
        from crew.memory.memory import DEFAULT_PATH

        near = store_path if store_path is not None else getattr(self.run_store(), "path", None)
        chosen = self.memory.path if self.memory is not None else None
        return chosen or (Path(near).parent / "memory.db" if near is not None else DEFAULT_PATH)

    def run_store(self) -> Any:
        """The ``RunStore`` of ``store=...`` (opened on first use), or None without one."""
        from crew.store.lifecycle import kept_store

        self._store = kept_store(self._store, self.store)
        return self._store

    def resume(
        self,
        run_id: str | None = None,
        *,
        inputs: Mapping[str, Any] | None = None,
        approvals: Mapping[DecisionKey, Any] | None = None,
    ) -> CrewOutput:
        """Continue a stored run (default: the latest unfinished one), running only unfinished tasks.

        A paused run's tasks go on where they stopped; ``approvals`` decides its waiting calls
        (``True``, ``False`` or an ``Approval``) by call id, or by ``(task, call id)`` when calls
        of several tasks share an id, besides those decided with ``crew approve``.
        """
        return _run_sync(lambda: self.resume_async(run_id, inputs=inputs, approvals=approvals))

    def astream_resume(
        self,
        run_id: str | None = None,
        *,
        inputs: Mapping[str, Any] | None = None,
        approvals: Mapping[DecisionKey, Any] | None = None,
        buffer: int = 256,
    ) -> AsyncGenerator[Any, None]:
        """:meth:`resume` as a stream: the continued run's events as :meth:`astream` yields them, then its output."""
        from crew.stream.drive import stream_run

        new_run_id = uuid.uuid4().hex
        start = lambda: self.resume_async(run_id, inputs=inputs, new_run_id=new_run_id, approvals=approvals)  # noqa: E731
        return stream_run(new_run_id, start, buffer=buffer)

    def stream_resume(
        self,
        run_id: str | None = None,
        *,
        inputs: Mapping[str, Any] | None = None,
        approvals: Mapping[DecisionKey, Any] | None = None,
        buffer: int = 256,
    ) -> Iterator[Any]:
        """The sync twin of :meth:`astream_resume`."""
        from crew.stream.drive import iterate_sync

        return iterate_sync(lambda: self.astream_resume(run_id, inputs=inputs, approvals=approvals, buffer=buffer))

    async def resume_async(
        self,
        run_id: str | None = None,
        *,
        inputs: Mapping[str, Any] | None = None,
        new_run_id: str | None = None,
        approvals: Mapping[DecisionKey, Any] | None = None,
    ) -> CrewOutput:
        from crew.store.approvals import paused_state
        from crew.store.continuation import plan_resume

        store = self._require_store("resume")
        plan = plan_resume(self, store, run_id, inputs)
        checkpoints, decisions = paused_state(store, plan.run.id, approvals, crew=self)  # checked against what waits
        return await self._continue(plan.continuation(checkpoints, decisions), plan, new_run_id)

    def replay(self, run_id: str, *, from_task: str, inputs: Mapping[str, Any] | None = None) -> CrewOutput:
        """Rerun ``from_task`` and every task downstream of it, reusing the stored outputs of the others."""
        return _run_sync(lambda: self.replay_async(run_id, from_task=from_task, inputs=inputs))

    async def replay_async(
        self,
        run_id: str | None,
        *,
        from_task: str,
        inputs: Mapping[str, Any] | None = None,
        new_run_id: str | None = None,
    ) -> CrewOutput:
        from crew.store.continuation import plan_replay

        plan = plan_replay(self, self._require_store("replay"), run_id, from_task, inputs)
        return await self._continue(plan.continuation(), plan, new_run_id)

    async def _continue(self, continuation: Any, plan: Any, new_run_id: str | None) -> CrewOutput:
        from crew.run.kickoff import kickoff

        store = self._require_store(continuation.mode)
        run = plan.run
        return await kickoff(
            self,
            plan.inputs,
            run_id=new_run_id,
            continuation=continuation,
            store=store,
            settings=run.settings,
            folder=run.folder,
        )

    async def _kickoff_elsewhere(
        self, inputs: Mapping[str, Any], *, run_id: str, execute: Callable[[], Any]
    ) -> CrewOutput:
        """A kickoff a backend runs in another process (``execute``), recorded here: how the Ray
        backend goes through the one kickoff path without importing it (it sits below the crew)."""
        from crew.run.kickoff import kickoff_elsewhere

        return await kickoff_elsewhere(self, inputs, run_id=run_id, execute=execute)

    def _require_store(self, what: str) -> Any:
        store = self.run_store()
        if store is None:
            raise ConfigError(f"{what} needs a run store: build the crew with store='path/to/runs.db'")
        return store

    def kickoff_for_each(
        self,
        inputs: Sequence[Mapping[str, Any]],
        *,
        concurrency: int | None = None,
        max_concurrency: int | None = None,
        backend: Any = "local",
        **backend_options: Any,
    ) -> list[CrewOutput]:
        """``kickoff`` once per inputs mapping, ``max_concurrency`` at a time (default 4;
        ``concurrency`` is its old name); results in input order.

        ``backend="ray"`` runs each kickoff as a Ray task (options: ``address``,
        ``num_cpus``, ``max_retries``; see docs/scaling.md). For results as they finish, a
        batch that goes on past failures, or a token budget, use ``crew.backends.for_each``.
        """
        return _run_sync(
            lambda: self.kickoff_for_each_async(
                inputs, concurrency=concurrency, max_concurrency=max_concurrency, backend=backend, **backend_options
            )
        )

    async def kickoff_for_each_async(
        self,
        inputs: Sequence[Mapping[str, Any]],
        *,
        concurrency: int | None = None,
        max_concurrency: int | None = None,
        backend: Any = "local",
        **backend_options: Any,
    ) -> list[CrewOutput]:
        """The async twin of ``kickoff_for_each``.

        Every inputs mapping is checked first (a missing input fails before any kickoff
        starts); then the first failing kickoff cancels the others. Either way the error
        is raised with ``index`` (the position of its inputs) set on it.
        """
        from crew.backends.batch import outputs_for_each, resolve_backend

        if concurrency is not None and max_concurrency is not None and concurrency != max_concurrency:
            raise ValueError("give max_concurrency or its old name concurrency, not both")
        limit = max_concurrency if max_concurrency is not None else concurrency if concurrency is not None else 4
        if limit < 1:
            raise ValueError(f"concurrency must be at least 1, got {limit}")
        runner = resolve_backend(backend, **backend_options)
        return await outputs_for_each(self, inputs, backend=runner, max_concurrency=limit)


def _run_sync(make: Callable[[], Any]) -> Any:
    """Run a coroutine to completion from sync code, even when a loop is already running here."""
    from crew.common.blocking import run_blocking

    return run_blocking(make, thread_name="crew-kickoff")
