"""The manager's tools in the hierarchical process: delegate work to a coworker, ask one a question.

They are ordinary tools, so delegation needs no special path: the manager's loop calls
them through the run's executor like any other tool, and each call runs the coworker's
own loop (``aexecute_task`` on an ad-hoc ``Task``) in the manager's run scope, so cache
hits, usage limits and statistics stay crew-wide. The coworker works on an account
opened inside the manager's (``RunScope.open_account``): the run's ledger credits the
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
from crew.agent.scope import RunScope, active_account
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
    from crew.agent.loop import StepCallback
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
    if not coworkers:
        raise ValueError("delegation needs at least one coworker")
    labels = [_label(agent, coworkers) for agent in coworkers]
    by_key: dict[str, Agent] = {}
    for label, agent in zip(labels, coworkers, strict=True):
        if agent.llm is None and llm is not None:
            agent = agent.model_copy(update={"llm": llm})
        for key in (label, agent.role, agent.name or agent.role):
            by_key.setdefault(_key(key), agent)
    labels = list(dict.fromkeys(labels))
    listed = ", ".join(labels)
    # a Field default, not an Annotated alias: tool() resolves string annotations in module scope only
    enum: dict[str, Any] = {"enum": labels}
    coworker_field: Any = Field(description="the coworker, exactly as listed", json_schema_extra=enum)

    async def run(
        kind: str, coworker: str, description: str, expected: str, context: str, ctx: RunContext
    ) -> tuple[str, TaskOutput]:
        agent = by_key.get(_key(coworker))
        if agent is None:
            raise ToolException(f"unknown coworker '{coworker}'; choose one of: {listed}")
        name = f"{ctx.task or 'task'} -> {agent.role}"
        text = (
            prompts.render(prompts.DELEGATED_TASK, {"task": description, "context": context})
            if context
            else description
        )
        bus.emit("agent.delegate", run_id=ctx.run_id, kind=kind, manager=ctx.agent, coworker=agent.role, task=ctx.task)
        manager = active_account()
        scope = manager.scope if manager is not None else RunScope(run_id=ctx.run_id, executor=executor)
        account = scope.open_account(name, agent.role)  # inside the manager's account: the same task's work
        try:
            out = await agent.aexecute_task(
                Task(name=name, description=text, expected_output=expected),
                scope=account,
                step_callback=step_callback,
            )
        except BaseException as exc:
            # the turns it finished were paid for (the ledger has them); the failed output says so too
            failed = TaskOutput(
                name=name,
                description=text,
                expected_output=expected,
                agent=agent.role,
                model=_model_name(agent, scope),
                status="failed",
                error=f"{type(exc).__name__}: {exc}",
                usage=account.usage,
            )
            await report(failed, ctx)
            if not isinstance(exc, Exception):
                raise
            raise DelegationError(f"{agent.role} could not finish: {failed.error}", output=failed) from exc
        await report(out, ctx)
        return out.raw, out

    async def report(out: TaskOutput, ctx: RunContext) -> None:
        if on_output is not None:
            reported = on_output(out, ctx)
            if inspect.isawaitable(reported):
                await reported

    async def delegate_work(
        task: Annotated[str, "the task to do, complete and self-contained"],
        context: Context,
        *,
        coworker: str = coworker_field,
        ctx: RunContext,
    ) -> tuple[str, TaskOutput]:
        return await run("delegate", coworker, task, prompts.DELEGATED_EXPECTED_OUTPUT, context, ctx)

    async def ask_question(
        question: Annotated[str, "the question"], context: Context, *, coworker: str = coworker_field, ctx: RunContext
    ) -> tuple[str, TaskOutput]:
        return await run("ask", coworker, question, prompts.QUESTION_EXPECTED_OUTPUT, context, ctx)

    # never cached: a coworker's answer depends on more than the arguments (its model, the moment,
    # the run), and a manager that delegates the same text in two tasks wants two pieces of work
    options: dict[str, Any] = {"response_format": "content_and_artifact", "cache_function": never_cache}
    return [
        tool(
            DELEGATE_WORK,
            delegate_work,
            description=prompts.render(prompts.DELEGATE_WORK, {"coworkers": listed}),
            **options,
        ),
        tool(
            ASK_QUESTION,
            ask_question,
            description=prompts.render(prompts.ASK_QUESTION, {"coworkers": listed}),
            **options,
        ),
    ]


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
