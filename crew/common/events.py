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
from collections.abc import Callable, Iterator
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
    """A thread-safe list of subscribers; a failing subscriber never breaks a run."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._lock = threading.Lock()

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        with self._lock:
            self._subscribers.append(fn)

        def unsubscribe() -> None:
            with self._lock:
                if fn in self._subscribers:
                    self._subscribers.remove(fn)

        return unsubscribe

    def enabled(self, type: str) -> bool:
        """Whether an event of ``type`` would reach anyone (a subscriber or the log).

        Building an event costs microseconds; hot paths (every tool call) check this
        first and skip building the payload when nobody listens.
        """
        if self._subscribers:
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
        with self._lock:
            subscribers = list(self._subscribers)
        if not subscribers and not _logged(_level(type)):
            return Event(type=type, run_id=run_id, data={})  # nobody listens: nothing to scrub or build
        event = Event(type=type, run_id=run_id, data=scrub_data(redact(data)))
        self._deliver(event, subscribers)
        return event

    def publish(self, event: Event) -> None:
        """Hand an event made elsewhere (a Ray worker's, already scrubbed there) to the
        subscribers and the log, as if emitted here, keeping its time."""
        with self._lock:
            subscribers = list(self._subscribers)
        self._deliver(event, subscribers)

    def _deliver(self, event: Event, subscribers: list[Subscriber]) -> None:
        for fn in subscribers:
            try:
                fn(event)
            except Exception:
                logging.getLogger("crew").exception("event subscriber failed")
        _log(event)


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
    level = _level(event.type)
    if not _logged(level):
        return  # skip structlog entirely when nobody listens: this is a hot path
    data = {k: v for k, v in event.data.items() if k not in _NOT_LOGGED}
    get_logger().log(level, event.type, run_id=event.run_id, **data)


_NOT_LOGGED = frozenset({"messages", "reply", "output"})
"""Payloads for subscribers (transcripts, whole outputs), too big for a log line."""


bus = EventBus()
"""The process-wide bus: subscribe here to see every run's events."""
