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

from pydantic import BaseModel

from crew.errors import CrewError, TaskTimeoutError
from crew.events import bus
from crew.scheduler import TaskFailed
from crew.tasks.output import TaskOutput
from crew.tasks.task import Task
from crew.usage import Usage

HumanFeedback = Callable[[TaskOutput], Any]
"""``human_feedback(output) -> str`` (may be async): "" accepts, anything else is feedback."""


class GuardrailError(CrewError):
    """The guardrail kept rejecting a task's output after all its retries."""


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def terminal_feedback(output: TaskOutput) -> str:
    """Ask on the terminal; without one, accept the output unchanged (and say so in an event).

    A server or a CI job has nobody to ask, and waiting on a closed stdin would hang the run.
    """
    if not (sys.stdin and sys.stdin.isatty()):
        bus.emit("task.human_input", task=output.name, asked=False, reason="no terminal: output accepted")
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
    by the crew; ``worker`` overrides who performs every task (the manager, in the
    hierarchical process); ``delegation`` maps an agent (by id) to its delegation
    tools, which stay when a task's ``tools`` replace the agent's; ``delegated`` is
    where those tools report coworkers' outputs, by the delegating task's name (the
    runner keeps it equal to the delegated work its outputs' usage holds). ``llm`` is the model
    of agents that have none and ``step_callback`` runs after every agent turn (both
    crew-wide settings).
    """

    def __init__(
        self,
        tasks: Mapping[str, Task],
        *,
        executor: Any,
        run_id: str,
        worker: Any = None,
        delegation: Mapping[int, list[Any]] | None = None,
        delegated: dict[str, list[TaskOutput]] | None = None,
        llm: Any = None,
        step_callback: Callable[..., Any] | None = None,
        task_callback: Callable[[TaskOutput], Any] | None = None,
        human_feedback: HumanFeedback = terminal_feedback,
    ) -> None:
        self.tasks = tasks
        self.executor = executor
        self.run_id = run_id
        self.worker = worker
        self.delegation = delegation or {}
        self.delegated = delegated if delegated is not None else {}
        self.llm = llm
        self.step_callback = step_callback
        self.task_callback = task_callback
        self.human_feedback = human_feedback
        self.cancelled: dict[str, dict[str, Any]] = {}
        """What tasks cancelled mid-run had spent (usage, model, start), for the outputs the
        scheduler makes for them: tokens paid for are reported even when the work is dropped."""

    def label(self, name: str) -> dict[str, Any]:
        """The fields every output of task ``name`` carries, whether it ran or not
        (and, for a task cancelled while running, what it had spent)."""
        return {**self._fields(name), **self.cancelled.get(name, {})}

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
        """The model name a task's usage is filed under in ``usage_by_model``."""
        return getattr(agent.chat_model(self.llm), "model", None) if agent is not None else None

    async def __call__(self, name: str, context: list[TaskOutput]) -> TaskOutput:
        task = self.tasks[name]
        agent = self._performer(task)
        base = self._fields(name)
        started = time.time()

        def failed(exc: BaseException, attempts: int, usage: Usage) -> TaskFailed:
            return TaskFailed(
                TaskOutput(
                    **base,
                    status="failed",
                    error=f"{type(exc).__name__}: {exc}",
                    usage=usage,
                    model=self._model(agent),
                    attempts=attempts,
                    started_at=started,
                    finished_at=time.time(),
                )
            )

        if task.condition is not None:
            try:
                go = await _maybe_await(task.condition(context))
            except Exception as exc:
                raise failed(exc, 0, Usage()) from exc
            if not go:
                return TaskOutput(
                    **base,
                    status="skipped",
                    error="condition is false",
                    attempts=0,
                    started_at=started,
                    finished_at=time.time(),
                )

        bus.emit("task.start", run_id=self.run_id, task=name, agent=base["agent"], context=[o.name for o in context])
        spent = Usage()
        out: TaskOutput | None = None
        for attempt in range(1, task.max_retries + 2):
            usage_box: list[Usage] = []
            try:
                out = await _bounded(self._attempt(task, agent, context, usage_box), task.timeout, name)
                break
            except asyncio.CancelledError:
                spent = spent + Usage.total(usage_box)  # delegated work included (see _attempt)
                self.cancelled[name] = {"usage": spent, "model": self._model(agent), "started_at": started}
                raise
            except Exception as exc:
                spent = spent + Usage.total(usage_box)
                if attempt > task.max_retries:
                    raise failed(exc, attempt, spent) from exc
                error = f"{type(exc).__name__}: {exc}"
                bus.emit("task.retry", run_id=self.run_id, task=name, attempt=attempt, error=error)
        assert out is not None
        out = out.model_copy(
            update={
                **base,
                "status": "done",
                "raw": scrub(out.raw),  # an output leaves the process: no known secret in it
                "error": None,
                "usage": spent + out.usage,
                "attempts": attempt,
                "started_at": started,
                "finished_at": time.time(),
            }
        )
        try:
            if task.output_file:
                await asyncio.to_thread(write_output_file, task.output_file, out, task._output_root)
                out = out.model_copy(update={"output_file": task.output_file})
            for callback in (task.callback, self.task_callback):
                if callback is not None:
                    await _maybe_await(callback(out))
        except Exception as exc:
            raise failed(exc, attempt, out.usage) from exc
        return out

    async def _attempt(self, task: Task, agent: Any, context: list[TaskOutput], usage_box: list[Usage]) -> TaskOutput:
        """One attempt: the agent works until the guardrail and the human accept.

        ``usage_box`` collects usage as it happens, so a failed or timed-out attempt still
        counts the tokens it spent: each model turn's usage goes in as the turn ends, and
        when an agent call returns, its turns are replaced by its output's usage (which also
        holds what was spent on its behalf, e.g. by coworkers it delegated to); when it
        raises, the coworkers' finished work goes in beside its turns.
        """
        feedback: str | None = None
        previous: str | None = None  # the rejected answer, quoted beside the feedback
        rejections = 0
        tool_calls: list[Any] = []
        tools = task.tools
        if tools is not None and id(agent) in self.delegation:  # task tools replace, delegation stays
            tools = [*tools, *self.delegation[id(agent)]]

        def on_step(step: Any) -> Any:
            usage_box.append(step.usage)
            return self.step_callback(step) if self.step_callback is not None else None

        while True:
            mark = len(usage_box)
            reported = len(self.delegated.get(task.key, ()))
            try:
                out: TaskOutput = await agent.aexecute_task(
                    task,
                    context=context,
                    executor=self.executor,
                    tools=tools,
                    run_id=self.run_id,
                    feedback=feedback,
                    previous_answer=previous,
                    llm=self.llm,
                    step_callback=on_step,
                )
            except BaseException:
                # the turns are in the box already; work delegated during them is not
                usage_box.extend(work.usage for work in self.delegated.get(task.key, ())[reported:])
                raise
            usage_box[mark:] = [out.usage]
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
                    bus.emit("task.guardrail", run_id=self.run_id, task=task.name, accepted=False, feedback=feedback)
                    continue
                out = replace_output(out, value)
            if task.human_input:
                answer = await _maybe_await(self.human_feedback(out))
                if answer:
                    feedback, previous = str(answer), out.raw
                    continue
            return out.model_copy(update={"usage": Usage.total(usage_box), "tool_calls": tool_calls})


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


def replace_output(out: TaskOutput, value: Any) -> TaskOutput:
    """Apply a guardrail's accepted value: None keeps the output, anything else replaces it."""
    if value is None:
        return out
    if isinstance(value, TaskOutput):
        return value
    if isinstance(value, BaseModel):
        return out.model_copy(update={"pydantic": value, "json_dict": None, "raw": value.model_dump_json()})
    if isinstance(value, dict):
        raw = json.dumps(value, ensure_ascii=False)
        return out.model_copy(update={"json_dict": value, "pydantic": None, "raw": raw})
    return out.model_copy(update={"raw": value if isinstance(value, str) else str(value)})


def scrub(text: str) -> str:
    from crew.secrets import scrub as scrub_text

    return scrub_text(text)


def write_output_file(path: str, out: TaskOutput, root: str | None = None) -> None:
    """Write the output (JSON for structured outputs, else the raw text exactly); create the directories.

    ``root`` is the output folder of a path built from inputs (see ``Task.interpolate``):
    the write must land inside it after symlinks are followed. The text is scrubbed of
    known secrets, like everything else that leaves the process.
    """
    from crew.secrets import scrub
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
