"""Models that decorate another model: the wrapper base, and what finds the model inside.

A wrapper (the crew's request budget, instrumentation, a user's caching layer) holds the
model it decorates as ``.wrapped`` and forwards the whole contract to it, streaming
included; it overrides only what it changes. Whoever needs the innermost model (to ask a
litellm model's capabilities off the event loop, say) walks ``.wrapped`` with
:func:`innermost` instead of guessing at private attributes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from crew.models.base import ChatModel, LLMResponse, ModelDelta
from crew.models.calling import stream_reply

__all__ = ["WrappedModel", "innermost"]

Messages = list[dict[str, Any]]


class WrappedModel:
    """A ChatModel forwarding everything to ``wrapped``; subclass and override what you change."""

    def __init__(self, wrapped: ChatModel) -> None:
        self.wrapped = wrapped

    @property
    def model(self) -> str:
        return self.wrapped.model

    @property
    def supports_function_calling(self) -> bool:
        return self.wrapped.supports_function_calling

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.wrapped!r})"

    async def acomplete(
        self, messages: Messages, tools: Messages | None = None, *, output_schema: dict[str, Any] | None = None
    ) -> LLMResponse:
        return await self.wrapped.acomplete(messages, tools, output_schema=output_schema)

    async def astream(
        self, messages: Messages, tools: Messages | None = None, *, output_schema: dict[str, Any] | None = None
    ) -> AsyncIterator[ModelDelta | LLMResponse]:
        async for item in stream_reply(self.wrapped, messages, tools, output_schema=output_schema):
            yield item


def innermost(model: Any) -> Any:
    """The model at the bottom of a chain of wrappers (``model`` itself when it wraps nothing)."""
    seen = 0
    while isinstance(model, WrappedModel) and seen < 100:  # bounded: a wrapper chain is never a cycle
        model = model.wrapped
        seen += 1
    return model
