"""One flow run: steps launched as their triggers are met, on one event loop, until none is left.

A finished step is an *event* named after it; a router's step is a second event named after
the label it returned. Each event is matched against the steps waiting for that name
(``Steps.listeners``, and for a label the labelled starts), each with the names it has seen
since it last fired, so ``and_`` waits for all its parts and ``or_`` fires on each. Fired
steps become asyncio tasks: an ``async def`` step runs on the loop, a sync one in a worker
thread, so independent steps overlap. There is no recursion: a router loop of a million turns
needs no deeper stack than one turn.

The run ends when no step runs. A step that raises fails the run (the others are cancelled),
``max_steps`` step runs stop a loop, and a cancelled run (Ctrl-C) cancels the steps it runs.
With a :class:`Journal` (a resume), a step whose run with the same number already finished
is not called: its stored output is handed on as if it had just returned.
"""

from __future__ import annotations

import asyncio
import copy
import enum
import time
import warnings
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from crew.common.blocking import in_thread
from crew.common.events import bus, within_step
from crew.errors import (
    FlowBudgetExceededError,
    FlowError,
    FlowPaused,
    FlowRouteWarning,
    FlowStepError,
    FlowStepLimitError,
)
from crew.flow.conditions import satisfied
from crew.flow.state import dump_state
from crew.flow.steps import Step, Steps
from crew.run.budget import SharedBudget, shared_budget

__all__ = ["NO_INPUT", "FlowRun", "Journal", "StepRun", "current_step"]

NO_INPUT: Any = object()
"""What a start is handed at kickoff: nothing (it is called without an argument)."""

current_step: ContextVar[StepRun | None] = ContextVar("crew_flow_step", default=None)
"""The step run the calling code is part of (``Flow.ask`` reads it; worker threads inherit it)."""


@dataclass(slots=True)
class StepRun:
    """One run of one step: the ``number``-th of its name in this flow run (1, 2, ... in a loop)."""

    step: str
    number: int
    input: Any
    started: float = field(default_factory=time.time)
    asked: int = 0
    """Questions this step run has asked so far (``Flow.ask``): the next one's id."""


@dataclass(frozen=True, slots=True)
class Finished:
    """A step run that finished in an earlier run of the same flow (what a resume hands on)."""

    output: Any
    state: dict[str, Any] | None = None
    """The state right after it, as stored: recorded again with the step handed on (a replay of the
    continuation starts from it)."""


class Journal(Protocol):
    """What a resume knows: the step runs that finished before, by step and number."""

    def finished(self, step: str, number: int) -> Finished | None: ...


class Running(Protocol):
    """What the engine needs of the flow it runs (``crew.flow.flow.Flow``)."""

    @property
    def flow_name(self) -> str: ...

    @property
    def state(self) -> Any: ...


class Observer(Protocol):
    """Who hears about step runs as they happen (a run store's recorder)."""

    def step_started(self, run: StepRun) -> None: ...

    def step_done(self, run: StepRun, output: Any, state: dict[str, Any], *, reused: bool) -> None: ...

    def step_failed(
        self, run: StepRun, error: BaseException, state: dict[str, Any], *, status: str = "failed"
    ) -> None: ...

    def asked(self, call_id: str, step: str, question: str, held: dict[str, Any] | None = None) -> None: ...


class FlowRun:
    """The state of one kickoff of a flow; built by ``Flow.kickoff_async`` and discarded after it."""

    def __init__(
        self,
        flow: Running,
        steps: Steps,
        *,
        run_id: str,
        max_steps: int,
        journal: Journal | None = None,
        observer: Observer | None = None,
        answers: dict[str, str] | None = None,
        held: dict[tuple[str, int], Any] | None = None,
        budget: SharedBudget | None = None,
    ) -> None:
        self.flow = flow
        self.steps = steps
        self.run_id = run_id
        self.max_steps = max_steps
        self.journal = journal
        self.observer = observer
        self.answers = dict(answers or {})
        """A person's answers to questions the steps ask, by question id (a resume of a paused run)."""
        self.held = dict(held or {})
        """By (step, number): what a ``@human_feedback`` step's body returned before it paused (not run again)."""
        self.budget = budget
        """``max_tokens``/``max_cost`` of the whole run: every crew its steps kick off spends it."""
        self.outputs: list[tuple[str, Any]] = []
        """(step, output) of every step run, in the order they finished."""
        self.runs = 0
        self._numbers: dict[str, int] = {}
        self._waiting: dict[tuple[str, str], set[str]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._idle: asyncio.Event | None = None
        self.failure: FlowError | None = None

    # -- the run ----------------------------------------------------------------------------

    async def run(self, *, start: list[tuple[str, Any]] | None = None) -> Any:
        """Run from the flow's starts (or the given (step, input) pairs: a replay) to the end."""
        self._idle = asyncio.Event()
        token = shared_budget.set(self.budget)  # the steps' tasks (and their threads) inherit it
        try:
            for name, given in start if start is not None else [(s, NO_INPUT) for s in self.steps.starts]:
                self._launch(name, given)
            if self._tasks:
                await self._idle.wait()
        except asyncio.CancelledError:
            await self._cancel_all()
            raise
        finally:
            shared_budget.reset(token)
        if self.failure is not None:
            raise self.failure
        return self.outputs[-1][1] if self.outputs else None

    async def _cancel_all(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    def _launch(self, name: str, given: Any) -> None:
        if self.failure is not None:
            return
        self.runs += 1
        if self.runs > self.max_steps:
            self._fail(
                FlowStepLimitError(
                    f"flow {self.flow.flow_name} stopped at max_steps={self.max_steps} step runs, before "
                    f"running '{name}' again: a router loop that never ends? (raise max_steps if it is meant)",
                    step=name,
                    state=self._state_copy(),
                    run_id=self.run_id,
                )
            )
            return
        number = self._numbers[name] = self._numbers.get(name, 0) + 1
        task = asyncio.get_running_loop().create_task(self._run_step(StepRun(name, number, given)))
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not self._tasks and self._idle is not None:
            self._idle.set()

    def _fail(self, error: FlowError) -> None:
        if self.failure is None:
            self.failure = error
        for task in self._tasks:
            if task is not asyncio.current_task():
                task.cancel()

    def _state_copy(self) -> Any:
        return copy.deepcopy(self.flow.state)

    # -- one step run -----------------------------------------------------------------------

    async def _run_step(self, run: StepRun) -> None:
        step = self.steps.by_name[run.step]
        done = self.journal.finished(run.step, run.number) if self.journal is not None else None
        token = current_step.set(run)
        if bus.enabled("step.started"):
            bus.emit("step.started", run_id=self.run_id, flow=self.flow.flow_name, step=run.step, number=run.number)
        if self.observer is not None and done is None:
            self.observer.step_started(run)
        begun = time.perf_counter()
        try:
            output = done.output if done is not None else await self._call(step, run)
        except asyncio.CancelledError:
            raise
        except FlowPaused as paused:
            if self.observer is not None:
                self.observer.step_failed(run, paused, dump_state(self.flow.state), status="paused")
            self._fail(paused)
            return
        except BaseException as exc:  # noqa: BLE001 - a step's failure is the run's, named
            if not self._over_budget(run):
                self._step_failed(run, exc)
            return
        finally:
            current_step.reset(token)
        if self._over_budget(run):  # its crews' calls were refused: its output is not the step's work
            return
        self.outputs.append((run.step, output))
        self._step_done(run, output, time.perf_counter() - begun, reused=done is not None, state=done and done.state)
        if self.failure is None:
            self._fire(step, output)

    async def _call(self, step: Step, run: StepRun) -> Any:
        kept = self.held.get((run.step, run.number)) if step.feedback is not None else None
        if kept is not None:  # its body ran before it paused: the output it returned then, not a second run
            from crew.store.flow_runs import decode_output

            result = decode_output(kept.get("output"))
            run.asked = int(kept.get("asked") or 0)
            if isinstance(kept.get("state"), dict):  # and the state as its body left it
                from crew.flow.state import load_state

                flow: Any = self.flow
                flow._state = load_state(flow.state, kept["state"], flow.flow_name)
        else:
            result = await self._body(step, run.input)
        if step.feedback is not None:  # @human_feedback: a person's answer about the output
            from crew.flow.asking import with_feedback

            result = with_feedback(self.flow, run, step.feedback, result)
        return result

    async def _body(self, step: Step, given: Any) -> Any:
        bound: Callable[..., Any] = step.fn.__get__(self.flow, type(self.flow))
        args = () if given is NO_INPUT or not step.takes_input else (given,)
        with within_step(self.run_id, step.name):  # the crews it kicks off say so in their events
            result = await bound(*args) if step.is_async else await in_thread(bound, *args)
        if asyncio.iscoroutine(result):  # a sync step that returned a coroutine
            result = await result
        return result

    def _step_done(
        self, run: StepRun, output: Any, seconds: float, *, reused: bool, state: dict[str, Any] | None = None
    ) -> None:
        if self.observer is not None:
            self.observer.step_done(run, output, state or dump_state(self.flow.state), reused=reused)
        if bus.enabled("step.done"):
            bus.emit(
                "step.done",
                run_id=self.run_id,
                flow=self.flow.flow_name,
                step=run.step,
                number=run.number,
                duration=seconds,
                reused=reused,
                output=output,
            )

    def _over_budget(self, run: StepRun) -> bool:
        """Whether the run's budget was reached (while ``run`` ran): then the flow stops, ``run`` failed."""
        reached = None if self.budget is None else self.budget.reached
        if reached is None:
            return False
        error = FlowBudgetExceededError(
            str(reached),
            budget=reached.budget,
            limit=reached.limit,
            spent=reached.spent,
            step=run.step,
            state=self._state_copy(),
            run_id=self.run_id,
        )
        self._failed(run, error, f"BudgetExceededError: {reached}", error)
        return True

    def _step_failed(self, run: StepRun, exc: BaseException) -> None:
        error = FlowStepError(
            f"flow {self.flow.flow_name}: step '{run.step}' failed: {_said(exc)}",
            step=run.step,
            state=self._state_copy(),
            run_id=self.run_id,
        )
        error.__cause__ = exc
        self._failed(run, exc, f"{type(exc).__name__}: {exc}", error)

    def _failed(self, run: StepRun, exc: BaseException, said: str, error: FlowError) -> None:
        """Record and announce that ``run`` failed with ``exc`` (``said`` on the bus), then stop the
        flow with ``error``."""
        if self.observer is not None:
            self.observer.step_failed(run, exc, dump_state(self.flow.state))
        flow, step, number = self.flow.flow_name, run.step, run.number
        bus.emit("step.failed", run_id=self.run_id, flow=flow, step=step, number=number, error=said)
        self._fail(error)

    # -- who fires next ---------------------------------------------------------------------

    def _fire(self, step: Step, output: Any) -> None:
        """Launch every step that ``step`` finishing (and, for a router, its label) triggers."""
        self._event(step.name, output, label=False)
        chosen = output.outcome if step.feedback is not None and step.feedback.emit else output
        if step.routes and chosen is not None:
            label = str(chosen.value if isinstance(chosen, enum.Enum) else chosen)
            heard = label in self.steps.listeners or label in self.steps.labelled_starts
            bus.emit(
                "route.chosen", run_id=self.run_id, flow=self.flow.flow_name, step=step.name, label=label, heard=heard
            )
            if not heard:
                warnings.warn(
                    f"flow {self.flow.flow_name}: router '{step.name}' returned {label!r}, which no step "
                    f"listens for: the route ends there",
                    FlowRouteWarning,
                    stacklevel=2,
                )
            self._event(label, output if step.feedback is not None else label, label=True)

    def _event(self, name: str, payload: Any, *, label: bool) -> None:
        fired: set[str] = set()
        for listener in self.steps.listeners.get(name, ()):
            condition = self.steps.by_name[listener].spec.listen
            if condition is not None and self._met(("listen", listener), condition, name):
                fired.add(listener)
                self._launch(listener, payload)
        if not label:
            return
        for start in self.steps.labelled_starts.get(name, ()):
            condition = self.steps.by_name[start].start_trigger
            if start not in fired and condition is not None and self._met(("start", start), condition, name):
                self._launch(start, payload)

    def _met(self, key: tuple[str, str], condition: Any, name: str) -> bool:
        seen = self._waiting.setdefault(key, set())
        seen.add(name)
        if not satisfied(condition, seen):
            return False
        del self._waiting[key]
        return True


def _said(exc: BaseException) -> str:
    """A step's error as its run's message; ``input()`` on a closed standard input says what to do."""
    text = f"{type(exc).__name__}: {exc}"
    if (isinstance(exc, EOFError) and "reading a line" in str(exc)) or "lost sys.stdin" in str(exc):
        return (
            f"it read standard input (input()), which is closed or at its end ({text}): run it in a terminal, "
            "pipe the answers in (crew kickoff ... < answers.txt), or ask with self.ask(...) to pause the run "
            "until `crew approve` answers; then `crew resume` the run"
        )
    return text
