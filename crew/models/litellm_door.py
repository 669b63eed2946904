"""The litellm door: every provider litellm speaks, for the models the native door does not serve.

litellm's own retries are switched off (:mod:`crew.models.attempts` is the only retry
layer) and its timeout bounds each read only, so the whole attempt is bounded here too.
A streamed reply is assembled by litellm's ``stream_chunk_builder``, which also estimates
usage when the server sent none.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from crew.errors import RedirectRefused
from crew.models.attempts import Attempt, Attempts
from crew.models.base import LLMResponse, ModelDelta, emit_call, split_tool_calls, with_tools
from crew.models.litellm_http import find_refusal
from crew.models.litellm_loading import aload_litellm, load_litellm
from crew.models.retry import MalformedResponse
from crew.models.settings import CallSettings, Messages

__all__ = ["LitellmDoor"]

TRANSPORT = "litellm"


class LitellmDoor:
    """One call through litellm with the settings its LLM read for it."""

    def __init__(self, settings: CallSettings) -> None:
        self.settings = settings

    def supports_function_calling(self) -> bool:
        """What litellm's model table says (this imports litellm); an unknown model: False."""
        try:
            return bool(load_litellm().supports_function_calling(model=self.settings.model))
        except Exception:  # noqa: BLE001 - unknown models raise; text mode is the safe answer
            return False

    def request(self, messages: Messages, tools: Messages | None, *, stream: bool = False) -> dict[str, Any]:
        """litellm's keyword arguments for this call: the user's extras, then what crew decides."""
        settings = self.settings
        kwargs: dict[str, Any] = {"drop_params": True, **settings.extra}
        kwargs.update(
            model=settings.model, messages=messages, timeout=settings.timeout, num_retries=0, max_retries=0
        )  # ours is the only retry layer
        with_tools(kwargs, tools)  # drop_params leaves tool options in: OpenAI answers 400 to them alone
        optional: dict[str, object] = {"temperature": settings.temperature, "max_tokens": settings.max_tokens}
        optional.update(api_base=settings.api_base, api_key=settings.api_key)
        kwargs.update((name, value) for name, value in optional.items() if value is not None)
        if stream or settings.stream:
            kwargs["stream"] = True
            kwargs["stream_options"] = {"include_usage": True}
        return kwargs

    def attempts(self) -> Attempts:
        settings = self.settings
        return Attempts(settings.model, settings.policy, settings.limiter, secrets=[settings.api_key], fatal=_fatal)

    async def acomplete(self, messages: Messages, tools: Messages | None) -> LLMResponse:
        litellm = await aload_litellm()
        kwargs = self.request(messages, tools)
        settings = self.settings

        async def attempt(this: Attempt) -> LLMResponse:
            async with _bounded(settings.timeout, "no complete answer", settings.model), _unwrapped():
                raw = await litellm.acompletion(**kwargs)  # litellm's timeout is per read: the whole is bounded here
                if settings.stream:
                    raw = _assembled(litellm, [chunk async for chunk in raw], messages)
            _readable(raw)
            return self.finish(litellm, raw, this, messages)

        return await self.attempts().run(attempt)

    async def astream(self, messages: Messages, tools: Messages | None) -> AsyncIterator[ModelDelta | LLMResponse]:
        """Text deltas as the provider sends them, then the whole :class:`LLMResponse`, exactly once."""
        litellm = await aload_litellm()
        kwargs = self.request(messages, tools, stream=True)
        settings = self.settings

        async def attempt(this: Attempt) -> AsyncGenerator[ModelDelta | LLMResponse]:
            chunks: list[Any] = []
            async with _bounded(settings.timeout, "no answer", settings.model), _unwrapped():
                replies = aiter(await litellm.acompletion(**kwargs))
            while True:  # a stream may run long, but not ``timeout`` without a chunk
                async with _bounded(settings.timeout, "no data", settings.model), _unwrapped():
                    chunk = await anext(replies, None)
                if chunk is None:
                    break
                chunks.append(chunk)
                text = _delta_text(chunk)
                if text:
                    yield ModelDelta(text=text)
            raw = _assembled(litellm, chunks, messages)
            _readable(raw)
            yield self.finish(litellm, raw, this, messages, stream=True)

        async for item in self.attempts().stream(attempt):
            yield item

    def finish(
        self, litellm: Any, raw: Any, this: Attempt, messages: Any = None, *, stream: bool = False
    ) -> LLMResponse:
        """litellm's reply as an :class:`LLMResponse` (usage and cost with it), announced as ``llm.call``."""
        choice = raw.choices[0]
        message = choice.message
        tool_calls, invalid = split_tool_calls(getattr(message, "tool_calls", None) or [])
        prompt, completion, total = _counts(getattr(raw, "usage", None))
        content = message.content
        if content == "" and (tool_calls or invalid):  # litellm's assembled stream says "": OpenAI, and the
            content = None  # native door, say null for a reply that is only tool calls
        response = LLMResponse.counted(
            content,
            tool_calls,
            invalid,
            (prompt, completion, total),
            _cost(litellm, raw),
            model=self.settings.model,
            latency=this.elapsed(),
            finish_reason=choice.finish_reason,
        )
        stream = stream or self.settings.stream
        emit_call(response, attempts=this.number, stream=stream, transport=TRANSPORT, messages=messages)
        return response


def _counts(usage: Any) -> tuple[int, int, int]:
    """Prompt, completion and total tokens of litellm's usage; counts that are not numbers are malformed."""
    try:
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        return prompt, completion, int(getattr(usage, "total_tokens", 0) or prompt + completion)
    except (TypeError, ValueError):
        raise MalformedResponse("the model's reply holds token counts that are not numbers") from None


def _cost(litellm: Any, raw: Any) -> float:
    """The call's price in USD: litellm's own figure when it made one, else computed; unknown is 0."""
    hidden: dict[str, Any] = getattr(raw, "_hidden_params", None) or {}
    cost = hidden.get("response_cost")
    if cost is None:
        try:
            cost = litellm.completion_cost(completion_response=raw)
        except Exception:  # noqa: BLE001 - a model without a known price costs 0, never a failed call
            cost = 0.0
    return float(cost or 0.0)


def _assembled(litellm: Any, chunks: list[Any], messages: list[dict[str, Any]]) -> Any:
    """One response from a stream's chunks (content and tool-call deltas joined, usage kept).

    A stream in which nothing arrived (a body that was not server-sent events, a
    connection cut before the first delta) is a broken reply to retry, not an empty answer.
    """
    response = litellm.stream_chunk_builder(chunks, messages=messages) if any(map(_carries, chunks)) else None
    if response is None or not response.choices:
        raise MalformedResponse("the model's stream ended without a message (no content, tool call or usage)")
    return response


def _delta_text(chunk: Any) -> str:
    choices: list[Any] = getattr(chunk, "choices", None) or []
    for choice in choices:
        delta = getattr(choice, "delta", None)
        if delta is not None and delta.content:
            return delta.content
    return ""


@contextlib.asynccontextmanager
async def _bounded(seconds: float, what: str, model: str) -> AsyncGenerator[None]:
    """``seconds`` for what runs inside; past them a ``TimeoutError`` the retry policy retries."""
    import asyncio

    deadline = asyncio.timeout(seconds)
    try:
        async with deadline:
            yield
    except TimeoutError:
        if not deadline.expired():
            raise
        raise TimeoutError(f"{what} from {model} in {seconds:g} s") from None


@contextlib.asynccontextmanager
async def _unwrapped() -> AsyncGenerator[None]:
    """A refused redirect as itself: litellm and the SDK report it as a bare connection error."""
    try:
        yield
    except Exception as exc:
        refusal = find_refusal(exc)
        if refusal is None:
            raise
        raise refusal from None


def _fatal(exc: Exception) -> str | None:
    """A refused redirect is final: another attempt would be redirected again."""
    return "the server redirected to another origin" if isinstance(exc, RedirectRefused) else None


def _readable(raw: Any) -> None:
    """Raise ``MalformedResponse`` (retried like a 5xx) for a reply with no choice or no message."""
    choices = getattr(raw, "choices", None)
    if not choices:
        raise MalformedResponse("the model's reply holds no choices")
    if getattr(choices[0], "message", None) is None:
        raise MalformedResponse("the model's reply holds a choice without a message")


def _carries(chunk: Any) -> bool:
    """Whether a stream chunk holds anything of a reply: a content or tool-call delta, or usage."""
    if getattr(chunk, "usage", None) is not None:
        return True
    choices: list[Any] = getattr(chunk, "choices", None) or []
    for choice in choices:
        delta = getattr(choice, "delta", None)
        if delta is not None and (
            delta.content is not None or getattr(delta, "tool_calls", None) or getattr(delta, "function_call", None)
        ):
            return True
    return False
