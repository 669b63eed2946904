"""How callers use any ChatModel: stream it (or fall back to one reply), or call it from sync code.

These are the two helpers the contract in :mod:`crew.models.base` promises, so no model
writes a sync twin of ``acomplete`` and no caller checks for ``astream`` itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from crew.common.blocking import run_blocking
from crew.models.base import ChatModel, LLMResponse, ModelDelta

__all__ = ["complete_sync", "final_response", "stream_reply"]

Messages = list[dict[str, Any]]


async def stream_reply(
    model: ChatModel, messages: Messages, tools: Messages | None = None, *, output_schema: dict[str, Any] | None = None
) -> AsyncIterator[ModelDelta | LLMResponse]:
    """The model's ``astream`` when it has one; else its ``acomplete`` reply as the only item.

    Either way the last item is the whole LLMResponse, exactly once.
    """
    astream = getattr(model, "astream", None)
    if astream is None:
        yield await model.acomplete(messages, tools, output_schema=output_schema)
        return
    async for item in astream(messages, tools, output_schema=output_schema):
        yield item


async def final_response(stream: AsyncIterator[ModelDelta | LLMResponse]) -> LLMResponse:
    """Drain a stream and return its LLMResponse (a stream without one is a broken model)."""
    last: ModelDelta | LLMResponse | None = None
    async for last in stream:  # noqa: B007 - only the last item matters
        pass
    if not isinstance(last, LLMResponse):
        raise TypeError("a model's astream must end with its LLMResponse")
    return last


def complete_sync(
    model: ChatModel, messages: Messages, tools: Messages | None = None, *, output_schema: dict[str, Any] | None = None
) -> LLMResponse:
    """``model.acomplete(...)`` from sync code (also inside a running loop: then on a worker thread)."""
    return run_blocking(lambda: model.acomplete(messages, tools, output_schema=output_schema), thread_name="crew-model")
