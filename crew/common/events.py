"""Events: every step of a run is announced to subscribers and to the ``crew`` logger.

Logging goes through structlog wrapped around the stdlib logger ``crew``, which has a
``NullHandler``: a library stays silent until the application configures logging
(``logging.basicConfig(level=logging.INFO)`` is enough to see the records). Values
whose key looks like a secret are redacted, and every known secret value is scrubbed
(:mod:`crew.common.secrets`), before anything leaves this module.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from crew.common.secrets import scrub_data

_crew_logger = logging.getLogger("crew")
_crew_logger.addHandler(logging.NullHandler())

_SECRET_MARKERS = ("api_key", "apikey", "authorization", "secret", "password", "token_value")


class Event(BaseModel):
    """One thing that happened: ``type`` is dotted (``tool.call``, ``task.done`` ...)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    type: str
    time: float = Field(default_factory=time.time)
    run_id: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)


Subscriber = Callable[[Event], Any]


@dataclass(frozen=True, slots=True)
class EventOrigin:
    """Where the code emitting an event runs: which run, task and agent.

    Kept in a context variable, so a model or a tool that knows nothing of runs (an
    ``llm.call`` from any ChatModel) still emits events a run store or a tracer can
    file under the right run and task; asyncio tasks inherit it from their creator.
    """

    run_id: str | None = None
    task: str | None = None
    agent: str | None = None
    within: tuple[str, str] | None = None
    """(flow run id, step) when this code runs inside a flow's step: a crew kicked off there
    says so in its events (``flow_run``, ``flow_step``), so they nest under the step."""


_origin: ContextVar[EventOrigin | None] = ContextVar("crew_event_origin", default=None)


def current_origin() -> EventOrigin | None:
    return _origin.get()


@contextmanager
def scoped(*, run_id: str | None = None, task: str | None = None, agent: str | None = None) -> Iterator[EventOrigin]:
    """Events emitted inside carry these ids unless they name their own (unset ones are inherited)."""
    outer = _origin.get() or EventOrigin()
    origin = EventOrigin(run_id or outer.run_id, task or outer.task, agent or outer.agent, outer.within)
    token = _origin.set(origin)
    try:
        yield origin
    finally:
        _origin.reset(token)


@contextmanager
def within_step(flow_run: str, step: str) -> Iterator[EventOrigin]:
    """Events emitted inside (by a crew a flow's step kicks off) name the flow run and the step.

    Only the nesting is set: the flow's own events name their run, and a crew started
    inside names its own, as it does anywhere.
    """
    outer = _origin.get() or EventOrigin()
    origin = EventOrigin(outer.run_id, outer.task, outer.agent, (flow_run, step))
    token = _origin.set(origin)
    try:
        yield origin
    finally:
        _origin.reset(token)


@lru_cache(maxsize=4096)
def _secret_key(key: str) -> bool:
    """Whether a key names a credential; keys repeat in every event, so the answer is kept."""
    lowered = key.lower()
    return any(marker in lowered for marker in _SECRET_MARKERS)


def redact(data: dict[str, Any]) -> dict[str, Any]:
    """Drop the value of any key that looks like a credential."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if _secret_key(key):
            out[key] = "***"
        elif isinstance(value, dict):
            out[key] = redact(value)
        else:
            out[key] = value
    return out


class EventBus:
    """Thread-safe lists of subscribers; a failing subscriber never breaks a run.

    A subscriber of one run (``run_id=``) is kept apart from those of every event, so an event
    reaches only its own run's: with thousands of runs recorded at once, each event used to
    visit every run's recorder, and a batch cost grew with the square of its kickoffs. The
    lists are replaced, never changed in place, so an emit reads them without the lock.
    """

    def __init__(self) -> None:
        self._subscribers: tuple[Subscriber, ...] = ()
        self._by_run: dict[str, tuple[_RunSubscription, ...]] = {}
        self._lock = threading.Lock()

    def subscribe(
        self, fn: Subscriber, *, run_id: str | None = None, types: Iterable[str] | None = None
    ) -> Callable[[], None]:
        """``fn(event)`` for every event, or only for run ``run_id``'s; returns the remover.

        ``types`` (with ``run_id``): only events of those types. An event that no subscriber
        wants is never built: a run store's recorder wants 4 of a kickoff's 10 events, and
        each event it did not want was scrubbed for it all the same.
        """
        if types is not None and run_id is None:
            raise ValueError("types= is for a subscriber of one run (run_id=)")
        entry = _RunSubscription(fn, None if types is None else frozenset(types))
        with self._lock:
            if run_id is None:
                self._subscribers = (*self._subscribers, fn)
            else:
                self._by_run[run_id] = (*self._by_run.get(run_id, ()), entry)

        def unsubscribe() -> None:
            with self._lock:
                if run_id is None:
                    self._subscribers = _without(self._subscribers, fn)
                elif run_id in self._by_run:
                    rest = _without(self._by_run[run_id], entry)
                    if rest:
                        self._by_run[run_id] = rest
                    else:
                        del self._by_run[run_id]

        return unsubscribe

    def enabled(self, type: str) -> bool:
        """Whether an event of ``type`` would reach anyone (a subscriber or the log).

        Building an event costs microseconds; hot paths (every tool call) check this
        first and skip building the payload when nobody listens.
        """
        if self._subscribers or self._by_run:
            return True
        level = _LEVELS.get(type) or _level(type)
        return _crew_logger.isEnabledFor(level) and _logged(level)

    def emit(self, type: str, run_id: str | None = None, **data: Any) -> Event:
        origin = _origin.get()
        if origin is not None:
            run_id = run_id or origin.run_id
            if origin.task is not None and data.get("task") is None:
                data["task"] = origin.task
            if origin.agent is not None and data.get("agent") is None:
                data["agent"] = origin.agent
            if origin.within is not None and run_id != origin.within[0]:
                data.setdefault("flow_run", origin.within[0])
                data.setdefault("flow_step", origin.within[1])
        subscribers = self._for(run_id, type)
        if not subscribers and not _logged(_LEVELS.get(type) or _level(type)):
            return Event(type=type, run_id=run_id)  # nobody listens: nothing to scrub or build
        event = Event(type=type, run_id=run_id, data=scrub_data(redact(data)))
        self._deliver(event, subscribers)
        return event

    def publish(self, event: Event) -> None:
        """Hand an event made elsewhere (a Ray worker's, already scrubbed there) to the
        subscribers and the log, as if emitted here, keeping its time."""
        self._deliver(event, self._for(event.run_id, event.type))

    def _for(self, run_id: str | None, type: str) -> tuple[Subscriber, ...]:
        """Who hears an event of ``run_id`` and ``type``: every event's subscribers first, then the run's own."""
        everyone = self._subscribers
        entries = self._by_run.get(run_id, ()) if run_id is not None else ()
        if not entries:
            return everyone
        mine = tuple(e.fn for e in entries if e.types is None or type in e.types)
        return everyone + mine if mine else everyone

    def _deliver(self, event: Event, subscribers: tuple[Subscriber, ...]) -> None:
        for fn in subscribers:
            try:
                fn(event)
            except Exception:
                logging.getLogger("crew").exception("event subscriber failed")
        _log(event)


@dataclass(frozen=True, slots=True, eq=False)
class _RunSubscription:
    """A subscriber of one run, and the event types it wants (None: every type)."""

    fn: Subscriber
    types: frozenset[str] | None


def _without(subscribers: tuple[Any, ...], fn: Any) -> tuple[Any, ...]:
    """``subscribers`` less the first ``fn`` among them (the one its ``subscribe`` added)."""
    if fn not in subscribers:
        return subscribers
    at = subscribers.index(fn)
    return subscribers[:at] + subscribers[at + 1 :]


_logger: Any = None
_json_logs = True


def get_logger() -> Any:
    """The structlog logger for crew, built on first use (structlog loads lazily)."""
    global _logger
    if _logger is None:
        import structlog

        renderer = (
            structlog.processors.JSONRenderer(default=str)
            if _json_logs
            else structlog.dev.ConsoleRenderer(colors=False)
        )
        _logger = structlog.wrap_logger(
            logging.getLogger("crew"),
            processors=[
                structlog.stdlib.add_log_level,
                structlog.processors.TimeStamper(fmt="iso"),
                renderer,
            ],
            wrapper_class=structlog.stdlib.BoundLogger,
        )
    return _logger


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a record comes (the live progress view reroutes it)."""

    @property
    def stream(self) -> Any:  # type: ignore[override]
        import sys

        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def configure_logging(level: str | int = "info", *, json: bool = False) -> None:
    """What the CLI's ``--log-level``/``--log-json`` do: events at ``level`` and above on stderr.

    A library never calls this: an application that wants crew's records configures
    logging itself (the ``crew`` logger), and the records are JSON unless ``json=False`` here.
    """
    global _logger, _json_logs
    numeric = level if isinstance(level, int) else logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}: use debug, info, warning or error")
    for handler in [h for h in _crew_logger.handlers if isinstance(h, _StderrHandler)]:
        _crew_logger.removeHandler(handler)
    handler = _StderrHandler()
    handler.setLevel(numeric)
    _crew_logger.addHandler(handler)
    _crew_logger.setLevel(numeric)
    _json_logs, _logger = json, None


def _level(type: str) -> int:
    if type.endswith((".error", ".failed")):
        level = logging.WARNING
    else:
        level = logging.INFO if type in _INFO_EVENTS else logging.DEBUG
    if len(_LEVELS) < 1024:  # event types are a small fixed set; a caller inventing them must not grow this
        _LEVELS[type] = level
    return level


_LEVELS: dict[str, int] = {}
"""Each event type's log level, worked out once (``Bus.enabled`` runs on every tool call)."""


_INFO_EVENTS = frozenset({"run.start", "run.done", "task.start", "task.done", "task.skipped", "task.retry"})
"""The milestones of a run; every other event (each model and tool call) is DEBUG."""


def _logged(level: int) -> bool:
    """Whether a record at ``level`` would reach a real handler.

    ``isEnabledFor`` alone says yes to every warning (the root logger's level), even in
    an application that configured no logging: the first failed task would then import
    structlog (~0.1 s, on the event loop) to build a record our NullHandler drops.
    """
    if not _crew_logger.isEnabledFor(level):
        return False
    logger: logging.Logger | None = _crew_logger
    while logger is not None:
        if any(not isinstance(h, logging.NullHandler) and level >= h.level for h in logger.handlers):
            return True
        logger = logger.parent if logger.propagate else None
    return False


def _log(event: Event) -> None:
    level = _LEVELS.get(event.type) or _level(event.type)
    if not _logged(level):
        return  # skip structlog entirely when nobody listens: this is a hot path
    data = {k: v for k, v in event.data.items() if k not in _NOT_LOGGED}
    get_logger().log(level, event.type, run_id=event.run_id, **data)


_NOT_LOGGED = frozenset({"messages", "reply", "output"})
"""Payloads for subscribers (transcripts, whole outputs), too big for a log line."""


bus = EventBus()
"""The process-wide bus: subscribe here to see every run's events."""
