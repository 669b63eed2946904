"""What one model call takes from its ``LLM``, and what a door must do with it.

``LLM`` is the user's mutable configuration (``llm.model = ...`` later counts), so each
call reads it once into :class:`CallSettings` and hands that to the door it chose: a door
never reads the ``LLM`` itself, and neither door module imports :mod:`crew.models.llm`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from crew.models.base import LLMResponse, ModelDelta
from crew.models.ratelimit import RateLimiter
from crew.models.retry import RetryPolicy

__all__ = ["DEFAULT_MAX_CONNECTIONS", "CallSettings", "Messages", "ModelDoor"]

Messages = list[dict[str, Any]]

DEFAULT_MAX_CONNECTIONS = 10_000
"""Open connections the native door's pool may hold per endpoint and event loop: above any
``max_concurrency`` a batch in one process runs at, so the pool never queues kickoffs the
batch let through (a kickoff has one call in flight at a time). Lower it with
``LLM(max_connections=...)`` for a server that limits connections per client."""


@dataclass(frozen=True)
class CallSettings:
    """One call's view of an ``LLM``: what is sent, how long each attempt may take, how it is retried.

    ``extra`` holds the provider keyword arguments as the user gave them (``top_p``,
    ``extra_headers``...); each door decides what of it goes on the wire. ``max_connections``
    bounds the native door's pool per endpoint and event loop.
    """

    model: str
    timeout: float
    policy: RetryPolicy
    limiter: RateLimiter | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    api_base: str | None = None
    api_key: str | None = None
    stream: bool = False
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    extra: Mapping[str, Any] = field(default_factory=dict[str, Any])


class ModelDoor(Protocol):
    """A way to the model: one reply, or a stream of deltas ending in the reply, and what it can do."""

    def supports_function_calling(self) -> bool: ...

    async def acomplete(self, messages: Messages, tools: Messages | None) -> LLMResponse: ...

    def astream(self, messages: Messages, tools: Messages | None) -> AsyncIterator[ModelDelta | LLMResponse]: ...
