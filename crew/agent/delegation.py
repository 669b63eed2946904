"""The manager's tools in the hierarchical process: delegate work to a coworker, ask one a question.

They are ordinary tools, so delegation needs no special path: the manager's loop calls
them through the run's executor like any other tool, and each call runs the coworker's
own loop (``aexecute_task`` on an ad-hoc ``Task``) in the manager's run scope, so cache
hits, usage limits and statistics stay crew-wide. The coworker works on an account
opened inside the manager's (``Meter.open_account``): the run's ledger credits the
coworker with its calls and the delegating task with all of them, and the manager's
output counts what it caused. The coworker's ``TaskOutput`` comes back as the tool
result's artifact, and ``on_output`` sees each finished piece of work.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from crew.agent import prompts
from crew.agent.meter import active_account
from crew.agent.scope import RunScope
from crew.common.events import bus
from crew.errors import ConfigError, DelegationError, ToolException
from crew.tasks.output import TaskOutput
from crew.tasks.task import Task
from crew.tools.base import BaseTool
from crew.tools.decorator import tool
from crew.tools.messages import RunContext
from crew.tools.options import never_cache

if TYPE_CHECKING:
    from crew.agent.agent import Agent
    from crew.agent.meter import Account
    from crew.agent.steps import StepCallback
    from crew.tools.execution.executor import ToolExecutor

DELEGATE_WORK = "Delegate work to coworker"
ASK_QUESTION = "Ask question to coworker"

OnOutput = Callable[[TaskOutput, RunContext], Any]
"""``on_output(coworker_output, context)``; ``context`` is the delegating call's (its ``task``
and ``agent`` are the manager's task and role). May be async."""

Context = Annotated[str, "everything the coworker needs to know: they know nothing of your work"]


def delegation_tools(
    coworkers: Sequence[Agent],
    *,
    executor: ToolExecutor | None = None,
    llm: Any = None,
    step_callback: StepCallback | None = None,
    on_output: OnOutput | None = None,
) -> list[BaseTool]:
    """The two delegation tools for a manager whose coworkers are ``coworkers``.

    Called by an agent's loop, a tool runs the coworker in that agent's run scope (its
    executor, ledger, callbacks). Called outside any agent run, the coworker's run is a
    run of its own on ``executor`` (a private one when None). ``llm`` is the model for
    coworkers that have none (default: the run's); ``step_callback`` sees every turn of
    the coworkers' loops; ``on_output`` gets each finished piece of delegated work.

    The ``coworker`` argument's schema is an enum of the coworkers, so a model (and
    ``TestModel``, which fills arguments from the schema) picks one that exists; the
    value is still matched loosely (any case, role or name, stray quotes), because
    models without constrained decoding answer "researcher" for "Researcher".
    """
    team = _Team(coworkers, llm=llm, executor=executor, step_callback=step_callback, on_output=on_output)
    # a Field default, not an Annotated alias: tool() resolves string annotations in module scope only
    enum: dict[str, Any] = {"enum": team.labels}
    coworker_field: Any = Field(description="the coworker, exactly as listed", json_schema_extra=enum)

    async def delegate_work(
        task: Annotated[str, "the task to do, complete and self-contained"],
        context: Context,
        *,
        coworker: str = coworker_field,
        ctx: RunContext,
    ) -> tuple[str, TaskOutput]:
        return await team.work("delegate", coworker, task, prompts.DELEGATED_EXPECTED_OUTPUT, context, ctx)

    async def ask_question(
        question: Annotated[str, "the question"], context: Context, *, coworker: str = coworker_field, ctx: RunContext
    ) -> tuple[str, TaskOutput]:
        return await team.work("ask", coworker, question, prompts.QUESTION_EXPECTED_OUTPUT, context, ctx)

    # never cached: a coworker's answer depends on more than the arguments (its model, the moment,
    # the run), and a manager that delegates the same text in two tasks wants two pieces of work
    options: dict[str, Any] = {"response_format": "content_and_artifact", "cache_function": never_cache}
    listed = {"coworkers": ", ".join(team.labels)}
    return [
        tool(DELEGATE_WORK, delegate_work, description=prompts.render(prompts.DELEGATE_WORK, listed), **options),
        tool(ASK_QUESTION, ask_question, description=prompts.render(prompts.ASK_QUESTION, listed), **options),
    ]


class _Team:
    """The coworkers a manager may hand work to, found by any spelling, and how one does the work."""

    def __init__(
        self,
        coworkers: Sequence[Agent],
        *,
        llm: Any,
        executor: ToolExecutor | None,
        step_callback: StepCallback | None,
        on_output: OnOutput | None,
    ) -> None:
        if not coworkers:
            raise ValueError("delegation needs at least one coworker")
        labels = [_label(agent, coworkers) for agent in coworkers]
        self.by_key: dict[str, Agent] = {}
        for label, agent in zip(labels, coworkers, strict=True):
            if agent.llm is None and llm is not None:
                agent = agent.model_copy(update={"llm": llm})
            for key in (label, agent.role, agent.name or agent.role):
                self.by_key.setdefault(_key(key), agent)
        self.labels = list(dict.fromkeys(labels))
        self.executor = executor
        self.step_callback = step_callback
        self.on_output = on_output

    async def work(
        self, kind: str, coworker: str, description: str, expected: str, context: str, ctx: RunContext
    ) -> tuple[str, TaskOutput]:
        """``coworker`` does the work on a task of its own, on an account inside the manager's."""
        agent = self.by_key.get(_key(coworker))
        if agent is None:
            raise ToolException(f"unknown coworker '{coworker}'; choose one of: {', '.join(self.labels)}")
        name = f"{ctx.task or 'task'} -> {agent.role}"
        text = (
            prompts.render(prompts.DELEGATED_TASK, {"task": description, "context": context})
            if context
            else description
        )
        bus.emit("agent.delegate", run_id=ctx.run_id, kind=kind, manager=ctx.agent, coworker=agent.role, task=ctx.task)
        manager = active_account()
        scope = manager.scope if manager is not None else RunScope(run_id=ctx.run_id, executor=self.executor)
        account = scope.meter.open_account(name, agent.role)  # inside the manager's account: the same task's work
        task = Task(name=name, description=text, expected_output=expected)
        try:
            out = await agent.aexecute_task(task, scope=account, step_callback=self.step_callback)
        except BaseException as exc:
            failed = await self._failed(task, agent, scope, account, exc, ctx)
            if not isinstance(exc, Exception):
                raise
            raise DelegationError(f"{agent.role} could not finish: {failed.error}", output=failed) from exc
        await self._report(out, ctx)
        return out.raw, out

    async def _failed(
        self, task: Task, agent: Agent, scope: RunScope, account: Account, exc: BaseException, ctx: RunContext
    ) -> TaskOutput:
        """The failed output, reported: the turns it finished were paid for (the ledger has them)."""
        failed = TaskOutput(
            name=task.name or "",
            description=task.description,
            expected_output=task.expected_output,
            agent=agent.role,
            model=_model_name(agent, scope),
            status="failed",
            error=f"{type(exc).__name__}: {exc}",
            usage=account.usage,
        )
        await self._report(failed, ctx)
        return failed

    async def _report(self, out: TaskOutput, ctx: RunContext) -> None:
        if self.on_output is not None:
            reported = self.on_output(out, ctx)
            if inspect.isawaitable(reported):
                await reported


def _model_name(agent: Agent, scope: RunScope) -> str | None:
    """The coworker's model name, or None when it has none (the very reason its run failed)."""
    try:
        return scope.model_for(agent).model
    except ConfigError:
        return None


def _label(agent: Agent, coworkers: Sequence[Agent]) -> str:
    """How a coworker is listed: its role, or its name where two share a role."""
    shared = sum(1 for other in coworkers if other.role == agent.role) > 1
    return (agent.name or agent.role) if shared else agent.role


def _key(text: str) -> str:
    """Coworker names as models write them: any case, quoted, with stray spaces."""
    return " ".join(text.strip().strip("'\"`").split()).casefold()
