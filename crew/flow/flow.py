"""``Flow``: a class whose decorated methods are the steps of an event-driven workflow.

Steps are wired by ``@start``/``@listen``/``@router`` (``crew.flow.decorators``), share
``self.state`` (``crew.flow.state``) and run as ``crew.flow.engine`` launches them. This
module is the user's face of it: the class, its state, ``kickoff``/``kickoff_async`` and what
a run leaves behind (``method_outputs``). The API is CrewAI's (docs/flows.md says where it
differs on purpose).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncGenerator, Iterator, Mapping
from typing import Any, ClassVar, Generic, get_args, get_origin

from pydantic import BaseModel
from typing_extensions import TypeVar  # a TypeVar with a default: plain `Flow` is `Flow[dict[str, Any]]`

from crew.common.events import bus
from crew.errors import FlowDefinitionError, FlowError, FlowPaused
from crew.flow.engine import FlowRun
from crew.flow.state import apply_inputs, dump_state, initial_state, load_state
from crew.flow.steps import Steps

__all__ = ["DEFAULT_MAX_STEPS", "Flow"]

S = TypeVar("S", bound="BaseModel | dict[str, Any]", default=dict[str, Any])

DEFAULT_MAX_STEPS = 1000
"""Step runs a flow run may make before it stops as a loop that never ends."""


class Flow(Generic[S]):
    """Subclass it, decorate methods as steps, then ``kickoff()``.

    ``Flow[State]`` or ``initial_state = State`` gives a typed state (a pydantic model);
    without either the state is a dict. Either way ``state`` has an ``id``.
    ``max_steps`` bounds the step runs of one kickoff (default 1,000).
    """

    initial_state: ClassVar[Any] = None
    name: ClassVar[str | None] = None
    max_steps: int = DEFAULT_MAX_STEPS
    max_tokens: int | None = None
    """Budget of a whole kickoff: total tokens all the crews its steps run may spend (as ``Crew.max_tokens``)."""
    max_cost: float | None = None
    """Budget of a whole kickoff: USD all the crews its steps run may spend (as ``Crew.max_cost``)."""
    store: Any = None
    """A ``RunStore`` or the path of one: every kickoff recorded there, step by step (resumable)."""
    answerer: Any = None
    """``answerer(question) -> str`` answers ``ask`` at once; None: on a store, the run pauses."""

    _steps: ClassVar[Steps]
    _state_type: ClassVar[Any] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            if get_origin(base) is not None and issubclass(get_origin(base), Flow):
                args = [a for a in get_args(base) if not isinstance(a, TypeVar)]
                if args:
                    cls._state_type = args[0]
        cls._steps = Steps.of(cls)

    def __init__(
        self,
        *,
        max_steps: int | None = None,
        store: Any = None,
        answerer: Any = None,
        max_tokens: int | None = None,
        max_cost: float | None = None,
        **state: Any,
    ) -> None:
        _set_budgets(self, max_tokens, max_cost)
        if store is not None:
            self.store = store
        if answerer is not None:
            self.answerer = answerer
        self._store: Any = None
        if max_steps is not None:
            if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
                raise FlowDefinitionError(f"flow {self.flow_name}: max_steps must be a positive int, not {max_steps!r}")
            self.max_steps = max_steps
        declared = self.initial_state if self.initial_state is not None else self._state_type
        self._state: Any = initial_state(declared, self.flow_name)
        if state:
            self._state = apply_inputs(self._state, state, self.flow_name)
        self._run: FlowRun | None = None

    # -- what a flow holds --------------------------------------------------------------------

    @property
    def flow_name(self) -> str:
        return self.name or type(self).__name__

    @property
    def state(self) -> S:
        """The state the steps share (a model instance or a dict); it always has an ``id``."""
        return self._state  # type: ignore[no-any-return]

    @property
    def flow_id(self) -> str:
        """The state's ``id`` (CrewAI's name for it)."""
        state = self._state
        return str(state["id"] if isinstance(state, dict) else state.id)

    @property
    def method_outputs(self) -> list[Any]:
        """The outputs of the last (or current) kickoff's step runs, in the order they finished."""
        return [] if self._run is None else [output for _, output in self._run.outputs]

    def ask(self, question: str) -> str:
        """Ask a person from inside a step and return the answer (see ``crew.flow.asking``).

        With ``answerer`` set (``Flow(answerer=fn)``) it answers at once; on a run store the run
        pauses until ``crew approve`` answers and ``crew resume`` runs the step again.
        """
        from crew.flow.asking import ask
        from crew.flow.engine import current_step

        return ask(self, current_step.get(), question)

    def plot(self, filename: str = "crew_flow") -> str:
        """Write ``filename``.html, a picture of the flow's steps, routes and labels; return its path.

        CrewAI's ``flow.plot("name")``; the page is the one ``crew plot FLOW_DIR`` draws.
        """
        from crew.flow.plot import plot

        return plot(type(self), filename)

    # -- running ------------------------------------------------------------------------------

    def kickoff(self, inputs: Mapping[str, Any] | None = None) -> Any:
        """Run the flow to its end and return the output of the last step that ran (blocking)."""
        from crew.common.blocking import run_blocking

        return run_blocking(lambda: self.kickoff_async(inputs), thread_name="crew-flow")

    async def kickoff_async(
        self, inputs: Mapping[str, Any] | None = None, *, run_id: str | None = None, folder: str | None = None
    ) -> Any:
        """Run the flow on this event loop: ``inputs`` set state fields before the first step.

        ``folder`` is recorded with the run (``crew kickoff`` gives the flow's folder, where
        ``crew resume`` finds the flow again)."""
        self._check()
        if inputs:
            self._state = apply_inputs(self._state, dict(inputs), self.flow_name)
        run = self._run = FlowRun(
            self, self._steps, run_id=run_id or uuid.uuid4().hex, max_steps=self.max_steps, budget=self._budget()
        )
        store = self.run_store()
        if store is None:
            return await self._execute(run)
        from crew.flow.durable import recorded

        return await recorded(self, run, store, inputs=dict(inputs or {}), folder=folder)

    # -- the run store ------------------------------------------------------------------------

    def run_store(self) -> Any:
        """The ``RunStore`` of ``store`` (opened on first use), or None without one."""
        from crew.store.lifecycle import kept_store

        self._store = kept_store(self._store, self.store)
        return self._store

    def resume(self, run_id: str | None = None) -> Any:
        """Continue a stored run of this flow (default: the latest unfinished one), blocking."""
        from crew.common.blocking import run_blocking

        return run_blocking(lambda: self.resume_async(run_id), thread_name="crew-flow")

    async def resume_async(self, run_id: str | None = None, *, new_run_id: str | None = None) -> Any:
        """Continue a failed, interrupted or paused run at its first step that did not finish.

        The steps that finished are not run again: their stored outputs are handed on, so the
        run goes the way it went (a router's label too), and the state is as it was after the
        last of them. A run that finished, or that a later resume finished, is refused.
        """
        from crew.flow.durable import latest_unfinished
        from crew.store.flow_runs import plan_flow_resume

        store = self._require_store("resume")
        stored = store.run(run_id) if run_id is not None else latest_unfinished(store, type(self))
        return await self._continue(store, plan_flow_resume(store, stored), "resume", new_run_id)

    def replay(self, run_id: str, *, from_step: str) -> Any:
        """Rerun a stored run from ``from_step``: what finished before it is handed on (blocking)."""
        from crew.common.blocking import run_blocking

        return run_blocking(lambda: self.replay_async(run_id, from_step=from_step), thread_name="crew-flow")

    async def replay_async(self, run_id: str, *, from_step: str, new_run_id: str | None = None) -> Any:
        """Rerun ``from_step`` and what follows it, with the state as it was before it ran."""
        from crew.store.flow_runs import plan_flow_replay

        if from_step not in self._steps.by_name:
            raise FlowDefinitionError(
                f"--from {from_step}: flow {self.flow_name} has no step '{from_step}' "
                f"(its steps: {', '.join(self._steps.by_name)})"
            )
        store = self._require_store("replay")
        return await self._continue(store, plan_flow_replay(store, store.run(run_id), from_step), "replay", new_run_id)

    async def _continue(self, store: Any, plan: Any, mode: str, new_run_id: str | None) -> Any:
        from crew.flow.durable import StoredJournal, recorded, restore

        self._check()
        start = plan.run.settings.get("state")
        if isinstance(start, dict):  # the state the stored run started with, then the state it reached
            self._state = load_state(self._state, start, self.flow_name)
        restore(self, plan)
        journal = StoredJournal(plan.finished, plan.states)
        run_id = new_run_id or uuid.uuid4().hex
        for name in ("max_tokens", "max_cost"):  # the run's budgets hold unless this flow has its own
            if getattr(self, name) is None and plan.run.settings.get(name) is not None:
                setattr(self, name, plan.run.settings[name])
        run = self._run = FlowRun(
            self,
            self._steps,
            run_id=run_id,
            max_steps=self.max_steps,
            journal=journal,
            answers=plan.answers,
            held=plan.held,
            budget=self._budget(plan.spent_before, plan.run.id),
        )
        return await recorded(self, run, store, inputs=plan.run.inputs, plan=plan, mode=mode, folder=plan.run.folder)

    def _budget(self, spent_before: Any = None, continued_from: str | None = None) -> Any:
        """The run's ``SharedBudget`` (None without ``max_tokens``/``max_cost``): its crews spend it together."""
        from crew.run.budget import SharedBudget

        return SharedBudget.of(self, spent_before=spent_before, continued_from=continued_from)

    def _require_store(self, what: str) -> Any:
        store = self.run_store()
        if store is None:
            raise FlowDefinitionError(f"{what} needs a run store: build the flow with store='path/to/runs.db'")
        return store

    def astream(
        self, inputs: Mapping[str, Any] | None = None, *, buffer: int = 256, run_id: str | None = None
    ) -> AsyncGenerator[Any, None]:
        """Run the flow, yielding its events as they happen, then its output (as ``Crew.astream``).

        The flow's steps are ``crew.flow.events`` models (``StepStarted``, ``StepFinished``,
        ``RouteChosen`` ...); the crews its steps kick off stream their own events among them
        (a crew's ``RunStarted.step`` names its step). Leaving the loop early cancels the run.
        """
        from crew.flow.events import stream_flow

        return stream_flow(self.kickoff_async, inputs, buffer=buffer, run_id=run_id)

    def stream(
        self, inputs: Mapping[str, Any] | None = None, *, buffer: int = 256, run_id: str | None = None
    ) -> Iterator[Any]:
        """The sync twin of :meth:`astream`: the run happens on a loop in a worker thread."""
        from crew.stream.drive import iterate_sync

        return iterate_sync(lambda: self.astream(inputs, buffer=buffer, run_id=run_id), thread_name="crew-flow")

    async def _execute(self, run: FlowRun, **options: Any) -> Any:
        started = time.perf_counter()
        bus.emit("flow.started", run_id=run.run_id, flow=self.flow_name, state=dump_state(self._state))
        status = "error"
        try:
            result = await run.run(**options)
            status = "done"
            return result
        except FlowError as exc:
            status = "paused" if isinstance(exc, FlowPaused) else "failed"
            raise
        except BaseException:
            status = "cancelled"
            raise
        finally:
            bus.emit(
                "flow.done",
                run_id=run.run_id,
                flow=self.flow_name,
                status=status,
                steps=run.runs,
                duration=time.perf_counter() - started,
            )

    def _check(self) -> None:
        """Before anything runs: a flow with no start, or a trigger that names nothing, is refused."""
        _set_budgets(self, self.max_tokens, self.max_cost)  # a class attribute is checked as a keyword is
        steps = self._steps
        if not steps.starts:
            raise FlowDefinitionError(f"flow {self.flow_name} has no @start() step: nothing would run")
        unknown = steps.unknown_triggers()
        if unknown:
            step, name = unknown[0]
            raise FlowDefinitionError(
                f"flow {self.flow_name}: step '{step.name}' ({step.where}) waits for '{name}', "
                f"which is no step of the flow and no router's label"
            )


def _set_budgets(flow: Flow[Any], max_tokens: Any, max_cost: Any) -> None:
    """``max_tokens``/``max_cost`` checked as ``Crew``'s are (positive numbers), then set."""
    for name, value in (("max_tokens", max_tokens), ("max_cost", max_cost)):
        if value is None:
            continue
        whole = name == "max_tokens"
        number = isinstance(value, int) if whole else isinstance(value, (int, float))
        if isinstance(value, bool) or not number or value <= 0:
            kind = "a positive int" if whole else "a positive number"
            raise FlowDefinitionError(f"flow {flow.flow_name}: {name} must be {kind}, not {value!r}")
        setattr(flow, name, value)
