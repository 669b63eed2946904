"""Agent: who does the work (role, goal, backstory, model, tools) and how long it may try.

An ``Agent`` is configuration only. Each ``aexecute_task`` call builds its own
``crew.agent.loop.AgentTaskRun`` for the transcript and usage of that task, inside the
run scope it is given (a crew's) or a private one, so one agent can work on many tasks
at once and the same object serves many crews and kickoffs.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from crew.agent.loop import AgentTaskRun
from crew.agent.meter import Account
from crew.agent.scope import RunScope
from crew.agent.steps import AgentStep, StepCallback
from crew.common.keywords import knowledge_sources_only, known_keys
from crew.errors import MissingInputError, TaskTimeoutError
from crew.tasks.interpolate import fill
from crew.tasks.output import TaskOutput
from crew.tools.base import BaseTool
from crew.tools.decorator import wrap_functions
from crew.tools.execution.executor import ToolExecutor
from crew.tools.execution.registry import one_tool_per_name

if TYPE_CHECKING:
    from crew.tasks.task import Task

__all__ = ["MAX_TOOL_CALLS_PER_REPLY", "Agent", "AgentStep"]

MAX_TOOL_CALLS_PER_REPLY = 32
"""How many tool calls of one model reply run (``Agent.max_tool_calls_per_reply``): providers send
a handful of parallel calls, and a hostile or broken server can send a hundred thousand."""


class Agent(BaseModel):
    """An LLM agent, with CrewAI's fields.

    ``llm`` is a litellm model string, an ``LLM``, or any ``ChatModel`` (``"test"`` is the
    offline ``TestModel``); ``None`` lets the crew supply its default. ``name`` keys the
    agent in a crew and defaults to ``role``. ``function_calling_llm`` helps models
    without native tool calling: when the text protocol's action cannot be read, it is
    asked to turn the reply into a proper tool call (CrewAI asks it on every action; we
    only pay for it when the parser fails). ``step_callback(step: AgentStep)`` runs after
    every model turn and may be async. ``system_template`` / ``prompt_template`` replace
    the prompts; see ``crew.agent.prompts`` for the fields they may use.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    role: str
    goal: str
    backstory: str = ""
    name: str | None = None
    llm: Any = Field(default=None, description="model string, LLM or ChatModel; None = the crew's default")
    tools: list[BaseTool] = Field(default_factory=list, repr=False)
    mcp: list[Any] = Field(default_factory=list, repr=False, exclude=True)
    """MCP servers (``crew.mcp.MCPServer``) whose tools the agent gets; a server in ``tools`` moves here."""
    max_iter: int = Field(default=15, ge=1)
    max_tool_calls_per_reply: int = Field(default=MAX_TOOL_CALLS_PER_REPLY, ge=1)
    max_execution_time: float | None = Field(default=None, gt=0)
    allow_delegation: bool = False
    verbose: bool = False
    system_template: str | None = None
    prompt_template: str | None = None
    function_calling_llm: Any = None
    step_callback: StepCallback | None = None
    knowledge_sources: list[Any] = Field(
        default_factory=list,
        repr=False,
        exclude=True,
        description="knowledge sources (crew.knowledge) only this agent reads",
    )
    memory: bool | None = Field(
        default=None,
        description="CrewAI's agent memory: true gives this agent the crew's memory even when the crew "
        "has none, false keeps it out of the crew's memory, unset follows the crew",
    )

    _models: dict[str, tuple[Any, Any]] = PrivateAttr(default_factory=dict)

    @field_validator("role", "goal", "backstory")
    @classmethod
    def _trimmed(cls, value: str) -> str:
        """YAML folded scalars (``role: >``) end in a newline; it would split prompts and log lines."""
        return value.strip()

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        return known_keys("agent", cls, data)

    @field_validator("llm", "function_calling_llm")
    @classmethod
    def _model_like(cls, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        from crew.models import ChatModel

        if not isinstance(value, ChatModel):
            raise ValueError(f"must be a model string, an LLM or a ChatModel, not {type(value).__name__}")
        return value

    @field_validator("tools", mode="before")
    @classmethod
    def _wrap_functions(cls, value: Any) -> Any:
        return wrap_functions(value)

    @field_validator("tools")
    @classmethod
    def _one_tool_per_name(cls, value: Any) -> Any:
        return one_tool_per_name(value) if value else value

    @model_validator(mode="before")
    @classmethod
    def _servers_from_tools(cls, data: Any) -> Any:
        """``tools=[my_tool, server]``: MCP servers go to ``mcp``, whatever list they were given in."""
        if not isinstance(data, dict) or not isinstance(data.get("tools"), list | tuple):
            return data
        servers = [t for t in data["tools"] if getattr(t, "__crew_mcp_server__", False)]
        if not servers:
            return data
        rest = [t for t in data["tools"] if not getattr(t, "__crew_mcp_server__", False)]
        return {**data, "tools": rest, "mcp": [*(data.get("mcp") or ()), *servers]}

    @field_validator("mcp")
    @classmethod
    def _servers(cls, value: list[Any]) -> list[Any]:
        for item in value:
            if not getattr(item, "__crew_mcp_server__", False):
                raise ValueError(f"mcp takes MCPServer objects (crew.mcp), got {type(item).__name__}")
        return value

    @field_validator("knowledge_sources", mode="before")
    @classmethod
    def _knowledge_sources(cls, value: Any) -> Any:
        return knowledge_sources_only(value)

    @model_validator(mode="after")
    def _default_name(self) -> Agent:
        if not self.name:
            self.name = self.role
        return self

    # -- models ---------------------------------------------------------------------

    def chat_model(self, default: Any = None) -> Any:
        """The ChatModel this agent talks to: its own ``llm``, else ``default`` (the crew's)."""
        if self.llm is None:
            from crew.models import as_chat_model

            return as_chat_model(None, default)
        return self._resolved("llm")

    def _resolved(self, field: str) -> Any:
        """Resolve a model field once (a string becomes one LLM, shared by every task).

        The cache remembers what it resolved, so a copy with another ``llm`` resolves anew.
        Copies (``model_copy``, ``interpolate``) share the cache, so only strings are stored:
        a model object needs no resolving, and storing a copy's (a throttled wrapper) would
        evict the original's LLM and make the next kickoff build a new one.
        """
        value = getattr(self, field)
        if not isinstance(value, str):
            from crew.models import as_chat_model

            return as_chat_model(value)
        cached = self._models.get(field)
        if cached is None or cached[0] is not value:
            from crew.models import as_chat_model

            cached = self._models[field] = (value, as_chat_model(value))
        return cached[1]

    # -- running a task -------------------------------------------------------------

    async def aexecute_task(
        self,
        task: Task | str,
        *,
        context: Sequence[TaskOutput] = (),
        tools: Sequence[BaseTool] | None = None,
        feedback: str | None = None,
        previous_answer: str | None = None,
        step_callback: StepCallback | None = None,
        scope: RunScope | Account | None = None,
        executor: ToolExecutor | None = None,
        run_id: str | None = None,
        llm: Any = None,
    ) -> TaskOutput:
        """Work on ``task`` (or a prompt: a task of that description) until a final answer and return its output.

        What to do: ``tools`` replaces the agent's tools for this call (default: ``task.tools``,
        else the agent's); ``feedback`` is a guardrail's or a person's rejection of an earlier
        answer, ``previous_answer`` that answer (quoted in the prompt beside the feedback);
        ``step_callback`` runs after each turn in addition to the agent's own and the run's.

        Where: ``scope`` is the run this work belongs to (a crew passes its ``RunScope``; a
        delegating tool an ``Account`` opened in it, which also says whom the work is for).
        Without one the call is a run of its own, made of ``executor`` (default: a private one),
        ``run_id`` and ``llm`` (the model to use when the agent has none); giving those with a
        scope is a ``TypeError``. Raises ``TaskTimeoutError`` past ``max_execution_time``,
        ``LLMError`` when the model fails, ``AgentError`` when it replies with nothing twice in
        a row (or at ``max_iter``), ``OutputValidationError`` when a structured answer still
        does not fit after the re-asks.
        """
        task = self._as_task(task)
        if scope is not None and (executor is not None or run_id is not None or llm is not None):
            raise TypeError("aexecute_task: with a scope, the executor, run id and default llm are the scope's")
        brief = (context, feedback, previous_answer, step_callback)
        chosen = tools if tools is not None else task.tools
        if chosen is None and self.mcp:  # its servers open for this task (once per run: a crew's are open)
            return await self._with_servers(task, scope, executor, run_id, llm, brief)
        chosen = self.tools if chosen is None else chosen
        place = scope if scope is not None else _own_run(chosen, executor, run_id, llm)
        return await self._within_time(await self._task_run(task, place, chosen, *brief))

    async def _with_servers(
        self,
        task: Task,
        scope: RunScope | Account | None,
        executor: ToolExecutor | None,
        run_id: str | None,
        llm: Any,
        brief: tuple[Sequence[TaskOutput], str | None, str | None, StepCallback | None],
    ) -> TaskOutput:
        """The task with the agent's own tools and those of its MCP servers, open while it runs."""
        from crew.mcp.opening import agent_tools, open_servers

        async with open_servers([self]):
            tools = [*self.tools, *agent_tools(self)]
            place = scope if scope is not None else _own_run(tools, executor, run_id, llm)
            return await self._within_time(await self._task_run(task, place, tools, *brief))

    async def _task_run(
        self,
        task: Task,
        place: RunScope | Account,
        tools: Sequence[BaseTool],
        context: Sequence[TaskOutput],
        feedback: str | None,
        previous_answer: str | None,
        step_callback: StepCallback | None,
    ) -> AgentTaskRun:
        if isinstance(place, RunScope):
            scope, account = place, place.meter.open_account(task.name or task.key, self.role)
        else:
            scope, account = place.scope, place
        model = scope.model_for(self)
        helper = scope.throttle(self._resolved("function_calling_llm")) if self.function_calling_llm else None
        await _settle_function_calling(model)
        return AgentTaskRun(
            self,
            task,
            scope=scope,
            account=account,
            model=model,
            tools=tools,
            context=context,
            feedback=feedback,
            previous_answer=previous_answer,
            callbacks=[cb for cb in (self.step_callback, scope.step_callback, step_callback) if cb is not None],
            extraction_model=helper,
        )

    def _within_time(self, run: AgentTaskRun) -> Awaitable[TaskOutput]:
        """The run, bounded by ``max_execution_time`` (the run itself when unbounded: no extra frame)."""
        return run.run() if self.max_execution_time is None else self._timed(run, self.max_execution_time)

    async def _timed(self, run: AgentTaskRun, seconds: float) -> TaskOutput:
        import asyncio  # imported where used: loading a crew (``crew validate``) never needs it

        limit = asyncio.timeout(seconds)
        try:
            async with limit:
                return await run.run()
        except TimeoutError:
            if not limit.expired():
                raise  # a timeout from inside (a tool's, a model's) is not ours to rename
            raise TaskTimeoutError(
                f"agent '{self.role}' ran past its max_execution_time of {seconds:g} s on task '{run.task_name}'"
            ) from None

    def _as_task(self, task: Task | str) -> Task:
        """A Task, or a prompt made one (a task of that description, for this agent)."""
        from crew.tasks.task import Task

        if isinstance(task, str):
            return Task(description=task, expected_output="An answer to the request.", agent=self)
        if not isinstance(task, Task):
            raise TypeError(f"an agent works on a Task or a prompt (str), not {type(task).__name__}")
        return task

    def execute_task(self, task: Task | str, **kwargs: Any) -> TaskOutput:
        """Blocking twin of :meth:`aexecute_task` (same arguments).

        Inside a running event loop (a notebook, an async app) the task runs on its own
        loop in a worker thread, so this never raises "event loop is already running".
        """
        from crew.common.blocking import run_blocking

        return run_blocking(lambda: self.aexecute_task(task, **kwargs), thread_name="crew-agent")

    # -- streaming --------------------------------------------------------------------

    def astream(
        self, task: Task | str, *, buffer: int = 256, run_id: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        """Work on ``task`` (or a prompt: a task of that description), yielding typed events as it
        goes (``crew.stream``: turns, text deltas, tool calls), then the ``TaskOutput``.

        ``kwargs`` are those of :meth:`aexecute_task` other than ``scope``: the run
        is one of its own. Leaving the loop early cancels the work.
        """
        import uuid

        from crew.stream.drive import stream_run

        run_id = run_id or uuid.uuid4().hex
        work = self._as_task(task)
        start = lambda: self.aexecute_task(work, run_id=run_id, **kwargs)  # noqa: E731
        return stream_run(run_id, start, buffer=buffer)

    def stream(self, task: Task | str, *, buffer: int = 256, run_id: str | None = None, **kwargs: Any) -> Iterator[Any]:
        """The sync twin of :meth:`astream`."""
        from crew.stream.drive import iterate_sync

        return iterate_sync(lambda: self.astream(task, buffer=buffer, run_id=run_id, **kwargs))

    # -- kickoff inputs -------------------------------------------------------------

    def interpolate(self, inputs: Mapping[str, Any]) -> Agent:
        """A copy with ``{placeholders}`` in role, goal and backstory filled from ``inputs``.

        ``name`` keeps its value, so the agent's key is the same in every kickoff. Raises
        ``MissingInputError`` naming each missing placeholder and the field it is in.
        """
        errors: list[str] = []
        filled = {
            field: fill(getattr(self, field), inputs, where=f"agent '{self.name}' {field}", errors=errors)
            for field in ("role", "goal", "backstory")
        }
        if errors:
            raise MissingInputError("; ".join(errors), errors=errors)
        return self.model_copy(update=filled)


def _own_run(tools: Sequence[BaseTool], executor: ToolExecutor | None, run_id: str | None, llm: Any) -> RunScope:
    """The scope of a call that is a run of its own (its executor: a private one when None)."""
    return RunScope(run_id=run_id, executor=executor if executor is not None else ToolExecutor(tools), llm=llm)


async def _settle_function_calling(model: Any) -> None:
    """Make ``model.supports_function_calling`` free to read before the loop reads it.

    For an ``LLM`` without ``function_calling`` set the answer comes from litellm's model
    table, so the first read imports litellm (3-5 s) or waits for a background import in
    flight; on the event loop that would freeze every other task of the crew. That read
    happens in a worker thread instead, and the property keeps its answer. Once litellm is
    loaded a read is a table lookup and stays on the loop: no thread hop per task.
    """
    from crew.models.litellm_loading import litellm_loaded
    from crew.models.llm import LLM
    from crew.models.wrapped import innermost

    if litellm_loaded():  # loaded, not merely in sys.modules (which an import in flight is)
        return
    inner = innermost(model)  # through wrappers such as the crew's request budget
    if isinstance(inner, LLM) and inner.function_calling is None and inner.door == "litellm":
        import asyncio

        await asyncio.to_thread(lambda: model.supports_function_calling)
