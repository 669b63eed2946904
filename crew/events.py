"""Events: every step of a run is announced to subscribers and to the ``crew`` logger.

Logging goes through structlog wrapped around the stdlib logger ``crew``, which has a
``NullHandler``: a library stays silent until the application configures logging
(``logging.basicConfig(level=logging.INFO)`` is enough to see the records). Values
whose key looks like a secret are redacted, and every known secret value is scrubbed
(:mod:`crew.secrets`), before anything leaves this module.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from crew.secrets import scrub_data

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


def redact(data: dict[str, Any]) -> dict[str, Any]:
    """Drop the value of any key that looks like a credential."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        lowered = key.lower()
        if any(marker in lowered for marker in _SECRET_MARKERS):
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
        return bool(self._subscribers) or _logged(_level(type))

    def emit(self, type: str, run_id: str | None = None, **data: Any) -> Event:
        event = Event(type=type, run_id=run_id, data=scrub_data(redact(data)))
        with self._lock:
            subscribers = list(self._subscribers)
        for fn in subscribers:
            try:
                fn(event)
            except Exception:
                logging.getLogger("crew").exception("event subscriber failed")
        _log(event)
        return event


_logger: Any = None


def get_logger() -> Any:
    """The structlog logger for crew, built on first use (structlog loads lazily)."""
    global _logger
    if _logger is None:
        import structlog

        _logger = structlog.wrap_logger(
            logging.getLogger("crew"),
            processors=[
                structlog.stdlib.add_log_level,
                structlog.processors.TimeStamper(fmt="iso"),
                structlog.processors.JSONRenderer(),
            ],
            wrapper_class=structlog.stdlib.BoundLogger,
        )
    return _logger


def _level(type: str) -> int:
    return logging.WARNING if type.endswith((".error", ".failed")) else logging.DEBUG


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
    get_logger().log(level, event.type, run_id=event.run_id, **event.data)


bus = EventBus()
"""The process-wide bus: subscribe here to see every run's events."""
