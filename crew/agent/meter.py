"""The one door every model call of a run goes through: the run's ``Meter``.

That is where a call's usage enters the run's ledger (once), where hooks run before a
call (a budget refuses one that would start past its limit by raising), after it
(tracing), and on each streamed piece of text (``on_delta``: a run that streams asks the
model to stream only when someone listens), and where a stopped run refuses the next call.

Who spends for what is an :class:`Account`: one per agent run of a task. While an agent
runs, its account is the *active* one (a context variable, so concurrent tasks each have
their own); an agent run that starts inside it (a coworker doing delegated work inside
the manager's tool call) opens a child account on the same task, so the coworker is
credited with its calls, the task with all of them, and the manager's run sees the
total of what it caused.

The run's ledger is kept here too (``UsageLedger``), since the meter is its one writer: one
ledger per run, every model call's usage recorded once, with whom it is for.

An entry says which task the work was for, which agent made the call and on which model.
Every figure a run reports is a sum over the entries: a task's usage (all its attempts,
and the work its agent delegated, since a coworker's calls are entered under the task
they serve), an agent's (a coworker is credited with its own calls), a model's, the
run's total. Nothing is subtracted and nothing is counted twice, because nothing is
copied from one figure into another.

Running totals are kept as calls are recorded, so reading the total (a budget check
before every call) or a task's figure costs an attribute or dictionary lookup, not a walk.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Awaitable, Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crew.common.usage import Usage
from crew.errors import RunStopped
from crew.models.base import LLMResponse, ModelDelta
from crew.models.calling import stream_reply
from crew.models.info import CALL_INFO, ModelCallInfo

if TYPE_CHECKING:
    from crew.models.base import ChatModel

__all__ = [
    "Account",
    "AfterCall",
    "BeforeCall",
    "DeltaSink",
    "Meter",
    "UsageEntry",
    "UsageLedger",
    "UsageSum",
    "active_account",
]

Messages = list[dict[str, Any]]
BeforeCall = Callable[[ModelCallInfo, "Meter"], None]
"""``hook(info, meter)`` before each model call; raising (e.g. ``RunStopped``) refuses the call."""
AfterCall = Callable[[ModelCallInfo, LLMResponse, "Meter"], None]
"""``hook(info, response, meter)`` after each model call, its usage already in the ledger."""
DeltaSink = Callable[[ModelCallInfo, ModelDelta], Awaitable[None] | None]
"""``sink(info, delta)`` for each piece of text a model streams; an awaitable it returns is
awaited before the next piece is read (back-pressure: a full stream buffer slows the model)."""


class Account:
    """One agent's run of one task, as the ledger sees it: who spends, for which task.

    ``usage`` is what this run caused: its own calls and those of the runs opened inside
    it (delegated work), summed as they are recorded. ``scope`` is the run it belongs to.
    """

    __slots__ = ("_sum", "agent", "meter", "parent", "scope", "task")

    def __init__(self, scope: Any, meter: Meter, task: str, agent: str, parent: Account | None) -> None:
        self.scope = scope
        self.meter = meter
        self.task = task
        self.agent = agent
        self.parent = parent
        self._sum = UsageSum()

    @property
    def usage(self) -> Usage:
        return self._sum.usage()


_active: ContextVar[Account | None] = ContextVar("crew_account", default=None)


def active_account() -> Account | None:
    """The account of the agent run in progress in this context (None outside any)."""
    return _active.get()


class Meter:
    """Every model call of one run: made, counted in its ledger, watched by its hooks."""

    def __init__(self, scope: Any) -> None:
        # the run whose calls these are (an account names it); held weakly, as the run holds its meter:
        # no reference cycle, so a finished run is freed as soon as it is dropped, not by the collector
        self._scope = weakref.ref(scope)
        self.ledger = UsageLedger()
        self.stop_reason: str | None = None
        self._before: list[BeforeCall] = []
        self._after: list[AfterCall] = []
        self._deltas: list[DeltaSink] = []

    @property
    def scope(self) -> Any:
        return self._scope()

    # -- accounts ----------------------------------------------------------------------------

    def open_account(self, task: str, agent: str) -> Account:
        """An account for ``agent`` working on ``task``; inside another run of this meter, a child
        of that run's account, on the task that run serves (work delegated from it)."""
        parent = _active.get()
        if parent is not None and parent.meter is self:
            return Account(self.scope, self, parent.task, agent, parent)
        return Account(self.scope, self, task, agent, None)

    @staticmethod
    def activate(account: Account) -> Token[Account | None]:
        """Make ``account`` the active one in this context; returns the token for :meth:`deactivate`."""
        return _active.set(account)

    @staticmethod
    def deactivate(token: Token[Account | None]) -> None:
        _active.reset(token)

    # -- the one door for model calls ----------------------------------------------------------

    async def call(
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
        account._sum.add(usage)
        parent = account.parent
        while parent is not None:
            parent._sum.add(usage)
            parent = parent.parent

    def stop(self, reason: str) -> None:
        """Refuse every model call from now on (``RunStopped``); calls in flight finish."""
        self.stop_reason = reason

    # -- hooks -----------------------------------------------------------------------------------

    def before_call(self, hook: BeforeCall) -> Callable[[], None]:
        """Run ``hook(info, meter)`` before every model call; returns the function that removes it."""
        return add_hook(self._before, hook)

    def after_call(self, hook: AfterCall) -> Callable[[], None]:
        """Run ``hook(info, response, meter)`` after every model call; returns its remover."""
        return add_hook(self._after, hook)

    def on_delta(self, sink: DeltaSink) -> Callable[[], None]:
        """Stream every model call of the run and hand each text piece to ``sink``; returns its remover."""
        return add_hook(self._deltas, sink)


def add_hook(hooks: list[Any], hook: Any) -> Callable[[], None]:
    """Append ``hook``; returns the function that removes it again (once)."""
    hooks.append(hook)

    def remove() -> None:
        if hook in hooks:
            hooks.remove(hook)

    return remove


# -- the ledger ------------------------------------------------------------------------------


@dataclass(slots=True)
class UsageEntry:
    """One model call: ``task`` it served (a delegated call: the delegating task), ``agent``, ``model``."""

    task: str | None
    agent: str | None
    model: str | None
    usage: Usage


class UsageSum:
    """A running sum of usages (plain numbers: adding pydantic models per call costs microseconds)."""

    __slots__ = ("completion", "cost", "prompt", "requests", "total")

    def __init__(self) -> None:
        self.prompt = self.completion = self.total = self.requests = 0
        self.cost = 0.0

    def add(self, usage: Usage) -> None:
        self.prompt += usage.prompt_tokens
        self.completion += usage.completion_tokens
        self.total += usage.total_tokens
        self.requests += usage.requests
        self.cost += usage.cost

    def usage(self) -> Usage:
        return Usage(
            prompt_tokens=self.prompt,
            completion_tokens=self.completion,
            total_tokens=self.total,
            requests=self.requests,
            cost=self.cost,
        )


class UsageLedger:
    """The usage of one run's model calls. Thread-safe: calls may finish on any thread.

    The run's total and each task's figure are kept as calls are recorded (a budget reads
    the total before every call, a task's output its figure); the per-agent and per-model
    breakdowns, read once when the run ends, are summed from the entries then.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[tuple[str | None, str | None, str | None, Usage]] = []
        self._total = UsageSum()
        self._tasks: dict[str | None, UsageSum] = {}

    def add(self, task: str | None, agent: str | None, model: str | None, usage: Usage) -> None:
        """Enter one call's usage, once (whoever else wants the figure reads it here)."""
        with self._lock:
            self._entries.append((task, agent, model, usage))
            self._total.add(usage)
            tally = self._tasks.get(task)
            if tally is None:
                tally = self._tasks[task] = UsageSum()
            tally.add(usage)

    # -- running totals (cheap) ----------------------------------------------------------

    @property
    def total(self) -> Usage:
        return self._total.usage()

    @property
    def total_tokens(self) -> int:
        return self._total.total

    @property
    def cost(self) -> float:
        return self._total.cost

    @property
    def requests(self) -> int:
        return self._total.requests

    def for_task(self, task: str) -> Usage:
        """What the run spent on ``task``: every attempt, and the work delegated from it."""
        tally = self._tasks.get(task)
        return tally.usage() if tally is not None else Usage()

    # -- breakdowns ------------------------------------------------------------------------

    def by_agent(self) -> dict[str, Usage]:
        return self._breakdown(lambda entry: entry.agent)

    def by_model(self) -> dict[str, Usage]:
        return self._breakdown(lambda entry: entry.model)

    @property
    def entries(self) -> tuple[UsageEntry, ...]:
        with self._lock:
            return tuple(UsageEntry(*entry) for entry in self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def _breakdown(self, key_of: Callable[[UsageEntry], str | None]) -> dict[str, Usage]:
        tallies: dict[str, UsageSum] = {}
        for entry in self.entries:
            key = key_of(entry)
            if key is not None:
                tally = tallies.get(key)
                if tally is None:
                    tally = tallies[key] = UsageSum()
                tally.add(entry.usage)
        return {key: tally.usage() for key, tally in tallies.items()}
