"""What one run shares, in one object: the RunScope, and the one door every model call goes through.

A run's shared things (its id, the tool executor, the default model, the crew's request
budget, the step and task callbacks, event subscribers, the usage ledger, and the means
to stop it) travel together as a ``RunScope``, from ``Crew`` through the task runner to
each agent's loop and to the coworkers it delegates to. ``Agent.aexecute_task`` without a
scope makes a private one, so an agent works the same inside a crew and on its own.

Every model call of a run goes through :meth:`RunScope.call_model`. That is where its
usage enters the ledger (once), where hooks run before a call (a budget refuses one that
would start past its limit by raising), after it (tracing), and on each streamed piece
of text (``on_delta``: a run that streams asks the model to stream only when someone
listens).

Who spends for what is an :class:`Account`: one per agent run of a task. While an agent
runs, its account is the *active* one (a context variable, so concurrent tasks each have
their own); an agent run that starts inside it (a coworker doing delegated work inside
the manager's tool call) opens a child account on the same task, so the coworker is
credited with its calls, the task with all of them, and the manager's run sees the
total of what it caused.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from crew.common.events import Event, bus
from crew.common.ledger import UsageLedger, UsageSum
from crew.common.usage import Usage
from crew.errors import RunStopped
from crew.models.base import LLMResponse, ModelDelta
from crew.models.calling import stream_reply
from crew.models.info import CALL_INFO, ModelCallInfo

if TYPE_CHECKING:
    from crew.models.base import ChatModel
    from crew.models.ratelimit import RateLimiter
    from crew.tools.execution.executor import ToolExecutor

__all__ = ["Account", "RunScope", "active_account", "watch_run"]

Messages = list[dict[str, Any]]
BeforeCall = Callable[[ModelCallInfo, "RunScope"], None]
"""``hook(info, scope)`` before each model call; raising (e.g. ``RunStopped``) refuses the call."""
AfterCall = Callable[[ModelCallInfo, LLMResponse, "RunScope"], None]
"""``hook(info, response, scope)`` after each model call, its usage already in the ledger."""
DeltaSink = Callable[[ModelCallInfo, ModelDelta], Awaitable[None] | None]
"""``sink(info, delta)`` for each piece of text a model streams; an awaitable it returns is
awaited before the next piece is read (back-pressure: a full stream buffer slows the model)."""


class Account:
    """One agent's run of one task, as the ledger sees it: who spends, for which task.

    ``usage`` is what this run caused: its own calls and those of the runs opened inside
    it (delegated work), summed as they are recorded.
    """

    __slots__ = ("_tally", "agent", "parent", "scope", "task")

    def __init__(self, scope: RunScope, task: str, agent: str, parent: Account | None) -> None:
        self.scope = scope
        self.task = task
        self.agent = agent
        self.parent = parent
        self._tally = UsageSum()

    @property
    def usage(self) -> Usage:
        return self._tally.usage()


_active: ContextVar[Account | None] = ContextVar("crew_account", default=None)


def active_account() -> Account | None:
    """The account of the agent run in progress in this context (None outside any)."""
    return _active.get()


class RunScope:
    """The shared state of one run (a kickoff, or one standalone agent call).

    ``run_id`` names the run in events and in tools' ``RunContext`` (a kickoff always has
    one; an agent called on its own has the one it was given, if any).

    ``llm`` is the model of agents that have none; ``limiter`` (the crew's ``max_rpm``)
    is drawn from before every model call; ``step_callback`` sees every agent turn,
    ``task_callback`` every finished task, ``human_feedback`` answers ``human_input``.
    """

    def __init__(
        self,
        *,
        run_id: str | None = None,
        executor: ToolExecutor | None = None,
        llm: Any = None,
        limiter: RateLimiter | None = None,
        step_callback: Callable[[Any], Any] | None = None,
        task_callback: Callable[[Any], Any] | None = None,
        human_feedback: Callable[[Any], Any] | None = None,
    ) -> None:
        self.run_id = run_id
        if executor is None:
            from crew.tools.execution.executor import ToolExecutor

            executor = ToolExecutor(run_id=self.run_id)
        self.executor = executor
        self.llm = llm
        self.limiter = limiter
        self.step_callback = step_callback
        self.task_callback = task_callback
        self.human_feedback = human_feedback
        self.ledger = UsageLedger()
        self.stop_reason: str | None = None
        self.checkpoints: dict[str, Any] = {}
        """Where paused tasks stopped (``crew.agent.checkpoint.TaskCheckpoint`` by task name): a resumed
        run's agent takes its task's checkpoint and goes on from there."""
        self._before: list[BeforeCall] = []
        self._after: list[AfterCall] = []
        self._deltas: list[DeltaSink] = []
        self._relays: list[Callable[[Any], Any]] = []
        self._subscriptions: list[Callable[[], None]] = []
        self._throttled: dict[int, tuple[ChatModel, ChatModel]] = {}
        _announce(self)

    # -- models ----------------------------------------------------------------------------

    def model_for(self, agent: Any) -> ChatModel:
        """The model ``agent`` talks to in this run: its own, else the run's default; throttled."""
        return self.throttle(agent.chat_model(self.llm))

    def throttle(self, model: ChatModel) -> ChatModel:
        """``model`` drawing from the run's request budget (itself when the run has none)."""
        if self.limiter is None:
            return model
        known = self._throttled.get(id(model))
        if known is None or known[0] is not model:
            from crew.models.ratelimit import Throttled

            known = self._throttled[id(model)] = (model, Throttled(model, self.limiter))
        return known[1]

    # -- accounts ----------------------------------------------------------------------------

    def open_account(self, task: str, agent: str) -> Account:
        """An account for ``agent`` working on ``task``; inside another run of this scope, a child
        of that run's account, on the task that run serves (work delegated from it)."""
        parent = _active.get()
        if parent is not None and parent.scope is self:
            return Account(self, parent.task, agent, parent)
        return Account(self, task, agent, None)

    @staticmethod
    def activate(account: Account) -> Any:
        """Make ``account`` the active one in this context; returns the token for :meth:`deactivate`."""
        return _active.set(account)

    @staticmethod
    def deactivate(token: Any) -> None:
        _active.reset(token)

    # -- the one door for model calls ----------------------------------------------------------

    async def call_model(
        self,
        account: Account,
        model: ChatModel,
        messages: Messages,
        tools: Messages | None = None,
        *,
        output_schema: dict[str, Any] | None = None,
        info: ModelCallInfo,
    ) -> LLMResponse:
        """Call ``model`` for ``account``: hooks before, the call (streamed when someone listens),
        its usage into the ledger, hooks after. A call that raises bills nothing (none was paid)."""
        if self._before or self.stop_reason is not None:
            self._check(info)
        token = CALL_INFO.set(info)
        try:
            if self._deltas:
                response = await self._streamed(model, messages, tools, output_schema, info)
            else:
                response = await model.acomplete(messages, tools, output_schema=output_schema)
        finally:
            CALL_INFO.reset(token)
        self.charge(account, model.model, response.usage)
        if self._after:
            for after in self._after:
                after(info, response, self)
        return response

    def _check(self, info: ModelCallInfo) -> None:
        if self.stop_reason is not None:
            raise RunStopped(f"the run was stopped: {self.stop_reason}")
        for before in self._before:
            before(info, self)

    async def _streamed(
        self,
        model: ChatModel,
        messages: Messages,
        tools: Messages | None,
        output_schema: dict[str, Any] | None,
        info: ModelCallInfo,
    ) -> LLMResponse:
        response: LLMResponse | None = None
        async for item in stream_reply(model, messages, tools, output_schema=output_schema):
            if isinstance(item, LLMResponse):
                response = item
            else:
                for sink in self._deltas:
                    pending = sink(info, item)
                    if pending is not None:
                        await pending
        if response is None:
            raise TypeError(f"the stream of model {model.model!r} ended without its LLMResponse")
        return response

    def charge(self, account: Account, model: str | None, usage: Usage) -> None:
        """Enter ``usage`` once in the ledger, and in the running figure of ``account`` and its parents."""
        self.ledger.add(account.task, account.agent, model, usage)
        account._tally.add(usage)
        parent = account.parent
        while parent is not None:
            parent._tally.add(usage)
            parent = parent.parent

    # -- hooks -----------------------------------------------------------------------------------

    def before_call(self, hook: BeforeCall) -> Callable[[], None]:
        """Run ``hook(info, scope)`` before every model call; returns the function that removes it."""
        return _add(self._before, hook)

    def after_call(self, hook: AfterCall) -> Callable[[], None]:
        """Run ``hook(info, response, scope)`` after every model call; returns its remover."""
        return _add(self._after, hook)

    def on_delta(self, sink: DeltaSink) -> Callable[[], None]:
        """Stream every model call of the run and hand each text piece to ``sink``; returns its remover."""
        return _add(self._deltas, sink)

    def on_relayed(self, sink: Callable[[Any], Any]) -> Callable[[], None]:
        """Hand ``sink`` the stream events of this run made in another process (a Ray worker's
        model turns, text and tool calls); returns its remover. While one is attached, work
        shipped elsewhere sends those events back as it goes."""
        return _add(self._relays, sink)

    @property
    def relayed(self) -> bool:
        """Whether anyone takes events made elsewhere (so a worker should send them)."""
        return bool(self._relays)

    async def relay(self, events: Any) -> None:
        """Give events made elsewhere to every relay sink, in order (a sink may make the sender wait)."""
        for event in events:
            for sink in self._relays:
                pending = sink(event)
                if pending is not None:
                    await pending

    def stop(self, reason: str) -> None:
        """Refuse every model call from now on (``RunStopped``); calls in flight finish."""
        self.stop_reason = reason

    # -- events ----------------------------------------------------------------------------------

    def subscribe(self, fn: Callable[[Event], Any]) -> Callable[[], None]:
        """``fn(event)`` for every event of this run until :meth:`close` (or the returned remover)."""
        run_id = self.run_id

        def mine(event: Event) -> None:
            if event.run_id == run_id:
                fn(event)

        unsubscribe = bus.subscribe(mine)
        self._subscriptions.append(unsubscribe)
        return unsubscribe

    def close(self) -> None:
        """End the run's event subscriptions."""
        while self._subscriptions:
            self._subscriptions.pop()()


# -- observing runs by id (a stream attaches to the scope of the run it started) ----------------

_watchers: dict[str, Callable[[RunScope], None]] = {}
_watchers_lock = threading.Lock()


def watch_run(run_id: str, attach: Callable[[RunScope], None]) -> Callable[[], None]:
    """Call ``attach(scope)`` when the scope of run ``run_id`` is made; returns the remover.

    Whoever starts a run by id (``Crew.astream``) can hook into its scope this way without
    the layers in between (the store's recorded kickoff, resume) passing anything along.
    """
    with _watchers_lock:
        _watchers[run_id] = attach

    def remove() -> None:
        with _watchers_lock:
            if _watchers.get(run_id) is attach:
                del _watchers[run_id]

    return remove


def _announce(scope: RunScope) -> None:
    if _watchers and scope.run_id is not None:
        with _watchers_lock:
            attach = _watchers.get(scope.run_id)
        if attach is not None:
            attach(scope)


def _add(hooks: list[Any], hook: Any) -> Callable[[], None]:
    hooks.append(hook)

    def remove() -> None:
        if hook in hooks:
            hooks.remove(hook)

    return remove
