"""Running one task: condition, attempts with timeout and retries, guardrail, human input,
output file and callbacks. The scheduler decides *when*; this module decides *how*.

Order of things for a task:

1. ``condition(context_outputs)`` false -> the task is skipped (it never "starts").
2. Up to ``1 + max_retries`` attempts, each bounded by ``timeout`` seconds. Inside an
   attempt the agent works, then the guardrail judges; a rejection sends its feedback
   back to the agent, up to ``guardrail_max_retries`` times, and then fails the attempt.
   With ``human_input`` a person then reviews the output; any feedback sends the agent
   back to work with it, an empty answer accepts.
3. The accepted output is written to ``output_file`` and handed to ``callback`` and the
   crew's ``task_callback``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from crew.agent.scope import RunScope
from crew.agent.structured import (
    OutputProblem,
    describe_errors,
    output_model,
    parse_output,
)
from crew.common.events import bus, scoped
from crew.errors import (
    BudgetExceededError,
    GuardrailError,
    OutputValidationError,
    TaskFailedError,
    TaskPaused,
    TaskTimeoutError,
)
from crew.run import context as context_providers
from crew.tasks.output import TaskOutput
from crew.tasks.task import Task

HumanFeedback = Callable[[TaskOutput], Any]
"""``human_feedback(output) -> str`` (may be async): "" accepts, anything else is feedback."""


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def terminal_feedback(output: TaskOutput) -> str:
    """Ask on the terminal; without one, accept the output unchanged (and say so in an event).

    A server or a CI job has nobody to ask, and waiting on a closed stdin would hang the run.
    """
    if not (sys.stdin and sys.stdin.isatty()):
        bus.emit(
            "task.human_input",
            task=output.name,
            asked=False,
            reason="no terminal: output accepted",
        )
        return ""
    prompt = (
        f"\n--- task '{output.name}' ({output.agent}) ---\n{output.raw}\n\n"
        "Feedback for the agent (empty line accepts): "
    )

    def ask() -> str:
        # stderr, not input()'s stdout: with `> out.md` the prompt would vanish into the file
        with _terminal:  # tasks running at once take turns at the prompt
            sys.stderr.write(prompt)
            sys.stderr.flush()
            return sys.stdin.readline()  # "" at end of input: accepted

    return (await asyncio.to_thread(ask)).strip()


_terminal = threading.Lock()


class TaskRunner:
    """Runs the tasks of one kickoff; callable as the scheduler's ``run_task``.

    ``tasks`` are the kickoff's filled-in copies by name, their agents already prepared
    by the crew; ``scope`` is the run's (executor, default model, callbacks, ledger);
    ``worker`` overrides who performs every task (the manager, in the hierarchical
    process); ``delegation`` maps an agent (by id) to its delegation tools, which stay
    when a task's ``tools`` replace the agent's. A task's usage is what the run's ledger
    holds for it: every attempt, failed ones and cancelled ones included, and the work
    its agent delegated.
    """

    def __init__(
        self,
        tasks: Mapping[str, Task],
        scope: RunScope,
        *,
        worker: Any = None,
        delegation: Mapping[int, list[Any]] | None = None,
    ) -> None:
        self.tasks = tasks
        self.scope = scope
        self.worker = worker
        self.delegation = delegation or {}
        self.human_feedback: HumanFeedback = scope.human_feedback or terminal_feedback
        self.cancelled: dict[str, dict[str, Any]] = {}
        """Model and start of tasks cancelled mid-run, for the outputs the scheduler makes for them."""

    def label(self, name: str) -> dict[str, Any]:
        """The fields every output of task ``name`` carries, whether it ran or not
        (and, for a task cancelled while running, what it had spent)."""
        return {
            **self._fields(name),
            "usage": self.scope.meter.ledger.for_task(name),
            **self.cancelled.get(name, {}),
        }

    def _fields(self, name: str) -> dict[str, Any]:
        task = self.tasks[name]
        agent = self._performer(task)
        return {
            "name": name,
            "description": task.description,
            "expected_output": task.expected_output,
            "agent": agent.role if agent is not None else None,
        }

    def _performer(self, task: Task) -> Any:
        return self.worker if self.worker is not None else task.agent

    def _model(self, agent: Any) -> str | None:
        """The model name a task's output names (its usage is filed by the ledger)."""
        return self.scope.model_for(agent).model if agent is not None else None

    async def __call__(self, name: str, context: list[TaskOutput]) -> TaskOutput:
        agent = self._performer(self.tasks[name])
        with scoped(task=name, agent=agent.role if agent is not None else None):  # events name their task
            return await self._run(name, context)

    async def _run(self, name: str, context: list[TaskOutput]) -> TaskOutput:
        task = self.tasks[name]
        agent = self._performer(task)
        started = time.time()
        fields = self._fields(name)
        if task.condition is not None and not await self._condition_holds(task, name, agent, context, started):
            return TaskOutput(
                **fields,
                status="skipped",
                error="condition is false",
                attempts=0,
                started_at=started,
                finished_at=time.time(),
            )
        bus.emit(
            "task.start",
            run_id=self.scope.run_id,
            task=name,
            agent=fields["agent"],
            context=[o.name for o in context],
        )
        await context_providers.gather(self.scope, name, task, agent)  # memory, knowledge: once per task
        out, attempt = await self._attempts(task, name, agent, context, started)
        out = out.model_copy(
            update={
                **fields,
                "status": "done",
                "raw": scrub(out.raw),  # an output leaves the process: no known secret in it
                "error": None,
                "usage": self.scope.meter.ledger.for_task(name),
                "attempts": attempt,
                "started_at": started,
                "finished_at": time.time(),
            }
        )
        try:
            out = await self._deliver(task, out)
            await context_providers.task_done(self.scope, name, task, agent, out)
            # a provider's model call (memory's ``analyze``) is the task's spending too
            return out.model_copy(update={"usage": self.scope.meter.ledger.for_task(name)})
        except Exception as exc:
            raise self._failed(name, agent, exc, attempt, started) from exc

    async def _condition_holds(
        self,
        task: Task,
        name: str,
        agent: Any,
        context: list[TaskOutput],
        started: float,
    ) -> bool:
        """``condition(context_outputs)``; one that raises fails the task before it starts."""
        assert task.condition is not None
        try:
            return bool(await _maybe_await(task.condition(context)))
        except Exception as exc:
            raise self._failed(name, agent, exc, 0, started) from exc

    async def _attempts(
        self,
        task: Task,
        name: str,
        agent: Any,
        context: list[TaskOutput],
        started: float,
    ) -> tuple[TaskOutput, int]:
        """Up to ``1 + max_retries`` attempts, each bounded by ``timeout``: the first output, and its attempt."""
        for attempt in range(1, task.max_retries + 2):
            try:
                return await _bounded(self._attempt(task, agent, context), task.timeout, name), attempt
            except asyncio.CancelledError:
                self.cancelled[name] = {
                    "model": self._model(agent),
                    "started_at": started,
                }
                raise
            except TaskPaused:  # waits for a person: not a failure, nothing to retry
                raise
            except Exception as exc:
                if attempt > task.max_retries or isinstance(exc, BudgetExceededError):  # a budget stays spent
                    raise self._failed(name, agent, exc, attempt, started) from exc
                error = f"{type(exc).__name__}: {exc}"
                bus.emit(
                    "task.retry",
                    run_id=self.scope.run_id,
                    task=name,
                    attempt=attempt,
                    error=error,
                )
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _deliver(self, task: Task, out: TaskOutput) -> TaskOutput:
        """The accepted output written to ``output_file`` and handed to the task's and the crew's callbacks."""
        if task.output_file:
            await asyncio.to_thread(write_output_file, task.output_file, out, task._output_root)
            out = out.model_copy(update={"output_file": task.output_file})
        for callback in (task.callback, self.scope.task_callback):
            if callback is not None:
                await _maybe_await(callback(out))
        return out

    def _failed(self, name: str, agent: Any, exc: BaseException, attempts: int, started: float) -> TaskFailedError:
        """The task's failure: its output says why, what it spent, and how many attempts it made."""
        return TaskFailedError(
            TaskOutput(
                **self._fields(name),
                status="failed",
                error=f"{type(exc).__name__}: {exc}",
                usage=self.scope.meter.ledger.for_task(name),
                model=self._model(agent),
                attempts=attempts,
                started_at=started,
                finished_at=time.time(),
            )
        )

    async def _attempt(self, task: Task, agent: Any, context: list[TaskOutput]) -> TaskOutput:
        """One attempt: the agent works until the guardrail and the human accept."""
        feedback: str | None = None
        previous: str | None = None  # the rejected answer, quoted beside the feedback
        rejections = 0
        tool_calls: list[Any] = []
        tools = task.tools
        if tools is not None and id(agent) in self.delegation:  # task tools replace, delegation stays
            tools = [*tools, *self.delegation[id(agent)]]
        while True:
            out: TaskOutput = await agent.aexecute_task(
                task,
                context=context,
                tools=tools,
                feedback=feedback,
                previous_answer=previous,
                scope=self.scope,
            )
            tool_calls.extend(out.tool_calls)
            if task.guardrail is not None:
                accepted, value = _verdict(await _maybe_await(task.guardrail(out)), task)
                if not accepted:
                    if rejections >= task.guardrail_max_retries:
                        times = rejections + 1
                        raise GuardrailError(
                            f"guardrail rejected the output of task '{task.name}' "
                            f"{times} time{'s' if times > 1 else ''}; last feedback: {value}"
                        )
                    rejections += 1
                    feedback, previous = str(value), out.raw
                    bus.emit(
                        "task.guardrail",
                        run_id=self.scope.run_id,
                        task=task.name,
                        accepted=False,
                        feedback=feedback,
                    )
                    continue
                out = replace_output(out, value, task)
            if task.human_input:
                answer = await _maybe_await(self.human_feedback(out))
                if answer:
                    feedback, previous = str(answer), out.raw
                    continue
            return out.model_copy(update={"tool_calls": tool_calls})


async def _bounded(coro: Any, timeout: float | None, name: str) -> TaskOutput:
    if timeout is None:
        return await coro
    deadline = asyncio.timeout(timeout)
    try:
        async with deadline:
            return await coro
    except TimeoutError as exc:
        if not deadline.expired():  # raised inside the task (a tool's or the agent's own limit)
            raise
        raise TaskTimeoutError(f"task '{name}' timed out after {timeout:g} s") from exc


def _verdict(result: Any, task: Task) -> tuple[bool, Any]:
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], bool):
        return result
    raise TypeError(f"the guardrail of task '{task.name}' must return (bool, value), got {type(result).__name__}")


def replace_output(out: TaskOutput, value: Any, task: Any = None) -> TaskOutput:
    """Apply a guardrail's accepted value: None keeps the output, anything else replaces it.

    A task with ``output_pydantic`` / ``output_json`` gets the replacement checked against
    its model, so ``raw``, ``pydantic`` and ``json_dict`` never disagree: a replacement that
    does not fit is the task's ``OutputValidationError``, not an output missing its model.
    """
    if value is None:
        return out
    if isinstance(value, TaskOutput):
        return value
    wanted = output_model(task) if task is not None else None
    if wanted is not None:
        return _fitted(out, value, task, *wanted)
    if isinstance(value, BaseModel):
        return out.model_copy(
            update={
                "pydantic": value,
                "json_dict": None,
                "raw": value.model_dump_json(),
            }
        )
    if isinstance(value, dict):
        raw = json.dumps(value, ensure_ascii=False)
        return out.model_copy(update={"json_dict": value, "pydantic": None, "raw": raw})
    return out.model_copy(update={"raw": value if isinstance(value, str) else str(value)})


def _fitted(out: TaskOutput, value: Any, task: Any, model: type[BaseModel], field: str) -> TaskOutput:
    try:
        if isinstance(value, model):
            fitted = value
        elif isinstance(value, BaseModel | dict):
            data = value.model_dump() if isinstance(value, BaseModel) else value
            fitted = model.model_validate(data)
        else:
            fitted = parse_output(value if isinstance(value, str) else str(value), model)
    except (ValidationError, OutputProblem) as exc:
        problems = describe_errors(exc) if isinstance(exc, ValidationError) else str(exc)
        raise OutputValidationError(
            f"the guardrail of task '{task.name}' replaced its output with one that does not fit "
            f"{field}={model.__name__}:\n{problems}"
        ) from None
    return out.model_copy(
        update={
            "raw": fitted.model_dump_json(),
            "pydantic": fitted if field == "output_pydantic" else None,
            "json_dict": fitted.model_dump(mode="json") if field == "output_json" else None,
        }
    )


def scrub(text: str) -> str:
    from crew.common.secrets import scrub as scrub_text

    return scrub_text(text)


def write_output_file(path: str, out: TaskOutput, root: str | None = None) -> None:
    """Write the output (JSON for structured outputs, else the raw text exactly); create the directories.

    ``root`` is the output folder of a path built from inputs (see ``Task.interpolate``):
    the write must land inside it after symlinks are followed. The text is scrubbed of
    known secrets, like everything else that leaves the process.
    """
    from crew.common.secrets import scrub
    from crew.tasks.interpolate import inside_folder

    target = Path(path)
    if out.pydantic is not None or out.json_dict is not None:
        text = json.dumps(out.to_dict(), ensure_ascii=False, indent=2)
    else:
        text = out.raw
    try:
        if root is not None and not inside_folder(path, root):
            raise OSError(f"it leads out of its folder '{root}' through a symbolic link")
        target.parent.mkdir(parents=True, exist_ok=True)
        if root is not None and not inside_folder(path, root):  # a link among the folders just made
            raise OSError(f"it leads out of its folder '{root}' through a symbolic link")
        target.write_text(scrub(text), encoding="utf-8")
    except OSError as exc:
        raise OSError(f"cannot write output_file '{path}' of task '{out.name}': {exc.strerror or exc}") from exc
