"""The one path from a ``Crew`` to its scheduler: every kickoff, resume and replay, recorded or not.

``kickoff`` runs a crew here (a ``CrewRun``: its run scope, per-run copies, the scheduler,
the CrewOutput); ``kickoff_elsewhere`` records a kickoff whose work happens in another
process (a Ray worker). With a run store, ``crew.store.lifecycle`` writes what happens;
it never drives. Everything here is per run, so a ``Crew`` can be kicked off many
times, concurrently, without runs seeing each other's usage, outputs or tool counts.
"""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from crew.agent.prompts import MANAGER_BACKSTORY, MANAGER_GOAL, MANAGER_ROLE
from crew.agent.scope import RunScope
from crew.common.events import Event, bus, scoped
from crew.errors import BudgetExceededError, ConfigError, CrewRunError
from crew.run.budget import Budget, shared_budget
from crew.run.continuation import FRESH, Continuation
from crew.run.scheduler import Scheduler
from crew.run.task_runner import TaskRunner
from crew.run.warmup import doors_ready, prewarm, resolve_models
from crew.tasks.graph import task_names
from crew.tasks.inputs import fill_inputs
from crew.tasks.output import CrewOutput, TaskOutput
from crew.tasks.task import Task
from crew.tools.approval import check_decision_keys

if TYPE_CHECKING:
    from crew.crew import Crew
    from crew.store.store import RunStore


async def kickoff(
    crew: Crew,
    inputs: Mapping[str, Any],
    *,
    run_id: str | None = None,
    continuation: Continuation = FRESH,
    on_task_done: Callable[[TaskOutput], Any] | None = None,
    approver: Any = None,
    store: RunStore | None = None,
    settings: Mapping[str, Any] | None = None,
    folder: str | None = None,
) -> CrewOutput:
    """Run ``crew`` once on this event loop; recorded in ``store`` (default: the crew's own, if any).

    ``continuation``: what it takes over from an earlier run (outputs, paused tasks, what
    was spent). ``settings`` and ``folder`` are kept with the record (how the CLI ran it).
    """
    prewarm(crew)  # models may have been set since the crew was built
    run_id = run_id or uuid.uuid4().hex
    store = store if store is not None else crew.run_store() or _flows_store()
    budget = Budget.of(crew, spent_before=continuation.spent_before, continued_from=continuation.from_run)
    if store is None:
        run = CrewRun(crew, inputs, run_id=run_id, budget=budget, store_path=None)
        return await run.execute(continuation, on_task_done=on_task_done, approver=approver)
    from crew.store.lifecycle import recorded, recording_first, run_recorder

    continuation = continuation.unspent()
    recorder = run_recorder(
        crew, store, inputs, run_id=run_id, continuation=continuation, settings=settings, folder=folder
    )
    run = CrewRun(crew, dict(inputs), run_id=run_id, budget=budget, store_path=store.path)
    done = recording_first(recorder, on_task_done)
    return await recorded(
        recorder, run.execute(continuation, on_task_done=done, approver=approver), continuation.from_run
    )


def _flows_store() -> RunStore | None:
    """The store of the flow run whose step kicks this crew off (``crew.store.store.ambient``), if any.

    Only a recorded flow run sets it, and that loaded the store module: without it, nothing to look up."""
    module = sys.modules.get("crew.store.store")
    return None if module is None else module.ambient.get()


async def kickoff_elsewhere(
    crew: Crew, inputs: Mapping[str, Any], *, run_id: str, execute: Callable[[], Awaitable[CrewOutput]]
) -> CrewOutput:
    """A kickoff that ``execute`` runs in another process (a Ray worker), recorded here by the driver.

    The run's row is written before ``execute`` starts it; ``execute`` replays the worker's
    events on this process's bus before it returns (the recorder writes their model and
    tool calls); the task outputs come from the ``CrewOutput`` that comes back.
    """
    store = crew.run_store()
    if store is None:
        return await execute()
    from crew.store.lifecycle import outputs_recorded, recorded, run_recorder

    recorder = run_recorder(crew, store, inputs, run_id=run_id)
    return await recorded(recorder, outputs_recorded(recorder, execute), None)


class CrewRun:
    """The state of one kickoff; built by :func:`kickoff` and discarded after it.

    Its shared things (executor, default model, request budget, callbacks, the usage
    ledger) are one :class:`~crew.agent.scope.RunScope`, handed to the task runner and, from
    there, to every agent run and every coworker a manager delegates to.
    """

    def __init__(
        self,
        crew: Crew,
        inputs: Mapping[str, Any],
        *,
        run_id: str,
        budget: Budget | None = None,
        store_path: Any = None,
    ) -> None:
        from crew.tools.execution.executor import ToolExecutor

        self.crew = crew
        self.store_path = store_path
        """The run store's file (None without one): the knowledge file lives beside it."""
        self.inputs = inputs
        self.run_id = run_id
        self.scope = RunScope(
            run_id=run_id,
            executor=ToolExecutor(cache=crew.cache, run_id=run_id),
            llm=crew.llm,
            limiter=crew.limiter,
            step_callback=crew.step_callback,
            task_callback=crew.task_callback,
            human_feedback=crew.human_feedback,
        )
        self.budget = budget
        """What the run may spend (``max_tokens``/``max_cost``): asked before every model call."""
        for limit in (budget, shared_budget.get()):  # its own, and that of the flow run whose step runs it
            if limit is not None:
                self.scope.meter.before_call(limit.before_call)
        self.delegation: dict[int, list[Any]] = {}
        """Delegation tools by id of the agent copy holding them."""
        self.scope.crew_name = crew.name
        self.scope.context_providers = crew.all_context_providers(store_path)

    async def execute(
        self,
        continuation: Continuation = FRESH,
        *,
        on_task_done: Callable[[TaskOutput], Any] | None = None,
        approver: Any = None,
    ) -> CrewOutput:
        """Run the crew; the agents' MCP servers are open for exactly this run (see ``crew.mcp.opening``)."""
        crew = self.crew
        everyone = crew.all_agents(with_manager=True)
        if crew.backend != "local":  # said before any server starts: a server does not travel to a worker
            from crew.backends.shipping import check_no_servers

            check_no_servers(crew)
        if not any(getattr(agent, "mcp", None) for agent in everyone):
            return await self._execute(continuation, on_task_done, approver)
        from crew.mcp.opening import open_servers

        fill_inputs(everyone, crew.tasks, self.inputs)  # a missing input is reported before any server starts
        with scoped(run_id=self.run_id):  # each server's mcp.start event names the run (its store records it)
            async with open_servers(everyone):
                return await self._execute(continuation, on_task_done, approver)

    async def _execute(
        self, continuation: Continuation, on_task_done: Callable[[TaskOutput], Any] | None, approver: Any
    ) -> CrewOutput:
        from crew.common.secrets import register_environment

        register_environment()  # keys set since the last run are scrubbed from this one's texts
        self._continue_paused(continuation, approver)
        started = time.time()
        names, tasks, worker = self._prepare()  # inputs and models checked before anything runs
        knowledge = await self._open_knowledge()  # sources indexed before any model call
        runner = TaskRunner(tasks, self.scope, worker=worker, delegation=self.delegation)
        scheduler = self._scheduler(runner, continuation, on_task_done)
        if self.crew.backend == "local":  # every task's model ready before the first starts: they start together
            performers = {id(a): a for a in [*(t.agent for t in tasks.values()), worker] if a is not None}
            await doors_ready(resolve_models(self.scope, performers.values()))
        if self.crew.verbose:
            self.scope.subscribe(self._printer())
        from crew.run.tracing import start_tracing

        stop_tracing = start_tracing(self.run_id)  # spans, when the application configured OpenTelemetry
        self._announce(names)
        try:
            result = await self._scheduled(scheduler, names, started)
        finally:
            self.scope.close()
            if knowledge is not None:
                knowledge.close()
            if stop_tracing is not None:
                stop_tracing()
        if scheduler.failed is not None:
            raise _failure(scheduler, result)
        return result

    async def _open_knowledge(self) -> Any:
        """The crew's knowledge provider (``crew.knowledge.provider``), asked after the others."""
        if not self.crew.knowledge_sources and not any(a.knowledge_sources for a in self.crew.all_agents()):
            return None
        from crew.knowledge.provider import open_knowledge

        provider = await open_knowledge(self.crew, self.store_path)
        if provider is not None:
            self.scope.context_providers = [*self.scope.context_providers, provider]
        return provider

    def _continue_paused(self, continuation: Continuation, approver: Any) -> None:
        """The run's approver, and the decisions and checkpoints a paused run's tasks go on with."""
        scope = self.scope
        scope.executor.approver = approver if approver is not None else self.crew.approver
        approvals, checkpoints = continuation.approvals, continuation.checkpoints
        if approvals:  # decisions for calls a paused run left waiting; a bare id two tasks share is refused
            check_decision_keys(approvals, [p for c in checkpoints.values() for p in c.pending])
            scope.executor.decisions.update(approvals)
        scope.checkpoints.update(checkpoints)
        scope.replayed_sections.update(continuation.sections)

    def _scheduler(
        self, runner: TaskRunner, continuation: Continuation, on_task_done: Callable[[TaskOutput], Any] | None
    ) -> Scheduler:
        """The run's scheduler over the crew's graph, every tool registered with the run's executor."""
        crew = self.crew
        graph = crew.validate_graph()  # tasks may have changed since the crew was built
        _register_tools(self.scope.executor, runner)
        run_task: Any = runner
        if crew.backend != "local":
            from crew.backends.ray_graph import task_runner_for

            run_task = task_runner_for(crew.backend, runner, crew)
        return Scheduler(
            graph,
            run_task,
            max_concurrency=crew.max_concurrency,
            on_error=crew.on_error,
            precomputed=continuation.outputs,
            on_task_done=on_task_done,
            label=runner.label,
            run_id=self.run_id,
        )

    def _announce(self, names: list[str]) -> None:
        crew = self.crew
        bus.emit(
            "run.start",
            run_id=self.run_id,
            crew=crew.name,
            process=str(crew.process),
            tasks=names,
            inputs=sorted(self.inputs),
        )

    async def _scheduled(self, scheduler: Scheduler, names: list[str], started: float) -> CrewOutput:
        """The scheduler's run as the crew's output; ``run.done`` says how it ended, whatever way it ends."""
        try:
            with scoped(run_id=self.run_id):  # every event of the run names it, whoever emits it
                outputs = await scheduler.run()
        except BaseException as exc:  # cancelled from outside, or a hook raised
            status = "cancelled" if isinstance(exc, asyncio.CancelledError) else "error"
            # what it had spent when it stopped, as a finished run says
            self._done(status, time.time() - started, self.scope.meter.ledger.total.model_dump())
            raise
        result = self._output(names, outputs, started)
        failed = scheduler.failed is not None or any(o.status == "failed" for o in result.tasks_output)
        result.status = "paused" if scheduler.paused else "failed" if failed else "done"  # a failed task says so
        if scheduler.paused:
            result.checkpoints = dict(scheduler.paused)
            result.pending_approvals = [p for c in scheduler.paused.values() for p in c.pending]
        self._done(result.status, (result.finished_at or time.time()) - started, result.usage.model_dump())
        return result

    def _done(self, status: str, duration: float, usage: dict[str, Any]) -> None:
        bus.emit("run.done", run_id=self.run_id, crew=self.crew.name, status=status, duration=duration, usage=usage)

    # -- preparation -----------------------------------------------------------------------

    def _prepare(self) -> tuple[list[str], dict[str, Task], Any]:
        """Task names, this run's filled-in tasks by name, and the hierarchical manager (or None).

        Every missing input (in any task or agent text) and every agent left without a
        model is reported in one error, before any model is called.
        """
        crew = self.crew
        names = task_names(crew.tasks)
        copies, filled = fill_inputs(crew.all_agents(with_manager=True), crew.tasks, self.inputs, names)
        _check_models(crew, copies.values())
        manager = copies.pop(id(crew.manager_agent), None)
        worker = None
        if crew.process == "hierarchical":
            worker = self._manager(manager, list(copies.values()))
        else:
            self._let_delegate(copies)
        tasks = {
            name: task.model_copy(update={"agent": copies.get(id(task.agent), task.agent)}) if task.agent else task
            for name, task in filled.items()
        }
        return names, tasks, worker

    def _let_delegate(self, copies: dict[int, Any]) -> None:
        """Each agent copy with ``allow_delegation`` (and coworkers) replaced by one holding delegation tools."""
        coworkers = list(copies.values())
        for key, agent in copies.items():
            others = [a for a in coworkers if a is not agent]
            if agent.allow_delegation and others:
                copies[key] = self._delegating(agent, others)

    def _manager(self, manager: Any, coworkers: list[Any]) -> Any:
        """The hierarchical process's manager: the given one, or one built on ``manager_llm``."""
        from crew.agent.agent import Agent

        crew = self.crew
        if manager is None:
            llm = crew.manager_llm if crew.manager_llm is not None else crew.llm
            manager = Agent(role=MANAGER_ROLE, goal=MANAGER_GOAL, backstory=MANAGER_BACKSTORY, llm=llm)
        return self._delegating(manager, coworkers)

    def _delegating(self, agent: Any, coworkers: list[Any]) -> Any:
        """A copy of ``agent`` holding delegation tools over ``coworkers`` (CrewAI's allow_delegation).

        The tools are remembered per copy, so a task's own ``tools`` (which replace the
        agent's) do not take delegation away from it. They run each coworker in this
        run's scope (the manager's), so nothing run-wide needs passing to them.
        """
        from crew.agent.delegation import delegation_tools

        tools = delegation_tools(coworkers)
        names = {t.tool_name for t in tools}
        own = [t for t in agent.tools if t.tool_name not in names]
        copy = agent.model_copy(update={"tools": [*own, *tools], "allow_delegation": True})
        self.delegation[id(copy)] = tools
        return copy

    # -- results ---------------------------------------------------------------------------

    def _output(self, names: list[str], outputs: Mapping[str, TaskOutput], started: float) -> CrewOutput:
        """The run's output; every usage figure is a sum over the run's ledger."""
        ordered = [outputs[name] for name in names]
        final = next((o for o in reversed(ordered) if o.status == "done"), None)
        ledger = self.scope.meter.ledger
        return CrewOutput(
            run_id=self.run_id,
            raw=final.raw if final else "",
            pydantic=final.pydantic if final else None,
            json_dict=final.json_dict if final else None,
            tasks_output=ordered,
            usage=ledger.total,
            usage_by_task={name: ledger.for_task(name) for name in names},
            usage_by_agent=ledger.by_agent(),
            usage_by_model=ledger.by_model(),
            tool_stats=self.scope.executor.stats,
            started_at=started,
            finished_at=time.time(),
        )

    def _printer(self) -> Callable[[Event], None]:
        """``verbose=True``: one line per task event of this run, on stderr."""

        def show(event: Event) -> None:
            if not event.type.startswith(("task.", "run.")):
                return
            data = event.data
            detail = data.get("error") or data.get("agent") or ""
            label = f" '{data['task']}'" if data.get("task") else ""
            print(f"[{self.crew.name}] {event.type}{label} {detail}".rstrip(), file=sys.stderr)

        return show


def _register_tools(executor: Any, runner: TaskRunner) -> None:
    """Every tool a task of the run can call: its agent's, its own, the hierarchical manager's."""
    tasks = runner.tasks.values()
    for agent in {id(t.agent): t.agent for t in tasks if t.agent is not None}.values():
        executor.register(agent.tools)
    for task in tasks:
        executor.register(task.tools or ())
    if runner.worker is not None:
        executor.register(runner.worker.tools)


def _failure(scheduler: Scheduler, result: CrewOutput) -> CrewRunError:
    """on_error="stop": the error the run raises, carrying its partial output (a budget says it was one)."""
    assert scheduler.failed is not None
    failed = result.task(scheduler.failed)
    cause = scheduler.errors.get(scheduler.failed)
    if isinstance(cause, BudgetExceededError):  # the run stopped on its budget: say that, not "task failed"
        error = BudgetExceededError(
            str(cause), budget=cause.budget, limit=cause.limit, spent=cause.spent, task=failed.name, output=result
        )
    else:
        error = CrewRunError(f"task '{failed.name}' failed: {failed.error}", task=failed.name, output=result)
    error.__cause__ = cause
    return error


def _check_models(crew: Crew, agents: Iterable[Any]) -> None:
    """A ConfigError when the manager or an agent would have no model, naming every agent without one."""
    if crew.process == "hierarchical" and crew.manager_agent is None and crew.manager_llm is None and crew.llm is None:
        raise ConfigError(
            "the hierarchical process needs a model for its manager: set manager_llm=..., "
            "manager_agent=... or the crew's llm=..."
        )
    unmodelled = [a.role for a in agents if a.llm is None] if crew.llm is None else []
    if unmodelled:
        raise ConfigError(
            f"agent '{unmodelled[0]}' has no llm and the crew has no default: set llm=... on the "
            'agent or on the Crew (a litellm model string, or "test" to run offline)',
            errors=[f"agent '{role}' has no llm" for role in unmodelled],
        )
