"""What one run shares, in one object: the ``RunScope``, the run's bag of state.

A run's shared things (its id, the tool executor, the default model, the crew's request
budget, the step and task callbacks, the checkpoints of paused tasks, event subscribers,
and the means to stop it) travel together as a ``RunScope``, from ``Crew`` through the
task runner to each agent's loop and to the coworkers it delegates to.
``Agent.aexecute_task`` without a scope makes a private one, so an agent works the same
inside a crew and on its own.

Its ``meter`` (``crew.agent.meter``) is the other half: the one door its model calls go
through, with the usage ledger, the accounts and the hooks around each call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from crew.agent.meter import Meter, add_hook
from crew.common.events import Event, bus

if TYPE_CHECKING:
    from crew.models.base import ChatModel
    from crew.models.ratelimit import RateLimiter
    from crew.tools.execution.executor import ToolExecutor

__all__ = ["RunScope", "watch_run", "watch_runs_here"]


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
        self.meter = Meter(self)
        self.checkpoints: dict[str, Any] = {}
        """Where paused tasks stopped (``crew.agent.checkpoint.TaskCheckpoint`` by task name): a resumed
        run's agent takes its task's checkpoint and goes on from there."""
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

    def stop(self, reason: str) -> None:
        """Refuse every model call from now on (``RunStopped``); calls in flight finish."""
        self.meter.stop(reason)

    # -- events made elsewhere ----------------------------------------------------------------

    def on_relayed(self, sink: Callable[[Any], Any]) -> Callable[[], None]:
        """Hand ``sink`` the stream events of this run made in another process (a Ray worker's
        model turns, text and tool calls); returns its remover. While one is attached, work
        shipped elsewhere sends those events back as it goes."""
        return add_hook(self._relays, sink)

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


_here: ContextVar[Callable[[RunScope], None] | None] = ContextVar("crew_scope_watcher", default=None)


def watch_runs_here(attach: Callable[[RunScope], None]) -> Callable[[], None]:
    """Call ``attach(scope)`` for every run whose scope is made in this context or one copied
    from it (asyncio tasks started from here, sync code in worker threads): a streamed flow
    hears the crews its steps kick off, whatever their run ids. Returns the remover, to call
    in this same context once the tasks that should inherit it have been started."""
    token = _here.set(attach)
    return lambda: _here.reset(token)


def _announce(scope: RunScope) -> None:
    if _watchers and scope.run_id is not None:
        with _watchers_lock:
            attach = _watchers.get(scope.run_id)
        if attach is not None:
            attach(scope)
    here = _here.get()
    if here is not None:
        here(scope)
