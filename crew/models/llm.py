"""The one place that talks to litellm: :class:`LLM`, and what turns ``llm=...`` into a model.

Agents see a :class:`ChatModel` (defined in :mod:`crew.models.base`, re-exported here):
OpenAI-format messages and tools in, an :class:`LLMResponse` out. :class:`LLM`
implements it for any litellm model; the doubles in :mod:`crew.testing` implement
it offline.

litellm is imported on first use, never at ``import crew``: the import costs
seconds, so :func:`prewarm_litellm` starts it in a background thread as soon as
a crew knows it needs a real model, letting loading and validation overlap it.
Before importing we switch off litellm's remote cost-map fetch, which otherwise
waits on the network.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, field_validator, model_validator

from crew.common.secrets import register as register_secret
from crew.common.secrets import register_headers, register_url
from crew.common.usage import Usage
from crew.models.attempts import Attempt, Attempts
from crew.models.base import LLMResponse, ModelDelta, emit_call, split_tool_calls, with_tools
from crew.models.doors import Door, Transport, choose, model_name_problem
from crew.models.ratelimit import RateLimiter, shared_limiter
from crew.models.retry import MalformedResponse, RetryPolicy

__all__ = ["LLM", "litellm_loaded", "load_litellm", "prewarm_litellm"]

# -- litellm, imported once per process, possibly in the background -------------

_litellm: Any = None
_import_lock = threading.Lock()  # held for the whole import: waiting on it joins an import in flight
_prewarm_lock = threading.Lock()  # guards only the thread bookkeeping, so prewarm never waits on an import
_prewarm_thread: threading.Thread | None = None


def load_litellm() -> Any:
    """Import and configure litellm (once); a concurrent background import is joined, not repeated."""
    global _litellm
    if _litellm is not None:
        return _litellm
    with _import_lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm

            litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banners on stdout
            # Nothing else calls out: the cost map is local (above); litellm sends no telemetry
            # unless a callback is configured, and we configure none.
            _litellm = litellm
    return _litellm


def litellm_loaded() -> bool:
    """Whether litellm is imported and ready; an import still in flight does not count."""
    return _litellm is not None


def prewarm_litellm() -> None:
    """Start importing litellm in a daemon thread; idempotent, and a no-op once it is loaded."""
    global _prewarm_thread
    with _prewarm_lock:
        if _litellm is not None or _prewarm_thread is not None:
            return
        _prewarm_thread = threading.Thread(target=_prewarm, name="crew-litellm-import", daemon=True)
        _prewarm_thread.start()


def _prewarm() -> None:
    with contextlib.suppress(Exception):  # the first real call imports again and reports the error
        load_litellm()


async def _aload_litellm() -> Any:
    if _litellm is not None:
        return _litellm
    import asyncio  # imported where a loop runs: loading a crew needs none

    return await asyncio.to_thread(load_litellm)  # a cold import must not freeze the event loop


_ALIASES = {"base_url": "api_base", "api_base_url": "api_base", "max_retries": "num_retries"}
"""Other libraries' names for a setting: passed on as they are, they would be ignored or overridden."""


class LLM(BaseModel):
    """A model: ``LLM("openai/gpt-4o-mini", temperature=0)``.

    ``transport`` picks the door its calls take: ``native`` (OpenAI chat completions over
    httpx, :mod:`crew.models.openai_door`), ``litellm``, or ``auto`` (the default: native
    for ``openai/...``, bare OpenAI names and OpenAI-compatible ``api_base`` endpoints,
    litellm for the rest; see :func:`crew.models.doors.choose`).

    ``num_retries`` counts retries after the first attempt, on rate limits,
    timeouts and server errors (see :mod:`crew.models.retry`); ``timeout`` bounds each
    attempt. ``max_rpm`` shares one process-wide budget with every LLM naming the
    same model, endpoint and limit; pass ``rate_limiter`` to share one budget
    more widely (e.g. across models of one account). Unknown keyword arguments go
    to the provider as they are (``top_p``, ``seed``, ``response_format``, ``tool_choice``,
    ``parallel_tool_calls``, ``extra_headers``...).
    ``output_schema`` is accepted for the ChatModel interface and not sent: the
    agent validates structured output itself, which works with every provider.
    """

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    model: str = Field(min_length=1)
    temperature: float | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    timeout: float = Field(default=60.0, gt=0)
    num_retries: int = Field(default=3, ge=0)
    api_base: str | None = None
    api_key: SecretStr | None = None
    max_rpm: int | None = Field(default=None, gt=0)
    function_calling: bool | None = None
    stream: bool = False
    retry_base_delay: float = Field(default=1.0, ge=0)
    retry_max_delay: float = Field(default=60.0, ge=0)
    rate_limiter: RateLimiter | None = Field(default=None, exclude=True)
    transport: Transport = "auto"

    _supports_fc: tuple[str, bool] | None = PrivateAttr(default=None)

    def __init__(self, model: str | None = None, /, **data: Any) -> None:
        if model is not None:
            data["model"] = model
        super().__init__(**data)

    @model_validator(mode="before")
    @classmethod
    def _no_misspelt_setting(cls, data: Any) -> Any:
        """Unknown settings go to the provider as they are (``top_p``, ``seed`` ...), so a misspelt one
        (``temprature``) would be sent, ignored and never reported: one close to a setting is an error."""
        if not isinstance(data, dict):
            return data
        import difflib

        for key in data:
            if not isinstance(key, str) or key in cls.model_fields:
                continue
            meant = _ALIASES.get(key) or next(iter(difflib.get_close_matches(key, cls.model_fields, 1, 0.8)), None)
            if meant is not None:
                raise ValueError(f"unknown LLM setting {key!r}: did you mean {meant!r}?")
        return data

    @field_validator("model")
    @classmethod
    def _names_a_model(cls, value: str) -> str:
        problem = model_name_problem(value)
        if problem is not None:
            raise ValueError(f"{problem} (e.g. 'openai/gpt-4o-mini')")
        return value

    def __repr__(self) -> str:  # the key never shows, not even masked
        return f"LLM(model={self.model!r})"

    __str__ = __repr__

    # -- configuration ---------------------------------------------------
    def prewarm(self) -> LLM:
        """Start importing litellm in the background (see :func:`prewarm_litellm`); returns self."""
        prewarm_litellm()
        return self

    @property
    def door(self) -> Door:
        """The transport this LLM's calls take (``auto`` resolved): ``native`` or ``litellm``."""
        return choose(self.model, self.api_base, self.transport)

    @property
    def supports_function_calling(self) -> bool:
        """The ``function_calling`` flag when set, else what litellm's model table says (unknown: False).

        The native door reads the same table as data, so it never imports litellm.
        """
        if self.function_calling is not None:
            return self.function_calling
        known = self._supports_fc
        if known is None or known[0] != self.model:  # keyed by model: `llm.model = ...` later counts
            if self.door == "native":  # the same table, read as data: no litellm import
                from crew.models.pricing import supports_function_calling

                answer = supports_function_calling(self.model)
            else:
                try:
                    answer = bool(load_litellm().supports_function_calling(model=self.model))
                except Exception:  # noqa: BLE001 - unknown models raise; text mode is the safe answer
                    answer = False
            known = self._supports_fc = (self.model, answer)
        return known[1]

    @property
    def limiter(self) -> RateLimiter | None:
        if self.rate_limiter is not None:
            return self.rate_limiter
        if self.max_rpm is not None:
            return shared_limiter(self.model, self.max_rpm, self.api_base)
        return None

    @property
    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(self.num_retries, self.retry_base_delay, self.retry_max_delay)

    def _request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, *, stream: bool = False
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"drop_params": True, **(self.model_extra or {})}
        kwargs.update(
            model=self.model, messages=messages, timeout=self.timeout, num_retries=0, max_retries=0
        )  # ours is the only retry layer
        with_tools(kwargs, tools)  # drop_params leaves tool options in: OpenAI answers 400 to them alone
        for name in ("temperature", "max_tokens", "api_base"):
            value = getattr(self, name)
            if value is not None:
                kwargs[name] = value
        if self.api_key is not None:
            kwargs["api_key"] = self.api_key.get_secret_value()
        if stream or self.stream:
            kwargs["stream"] = True
            kwargs["stream_options"] = {"include_usage": True}
        return kwargs

    # -- calls -------------------------------------------------------------
    def _attempts(self) -> Attempts:
        key = self.api_key.get_secret_value() if self.api_key is not None else None
        return Attempts(self.model, self.retry_policy, self.limiter, secrets=[key])

    async def acomplete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        output_schema: dict[str, Any] | None = None,
    ) -> LLMResponse:
        if self.door == "native":
            from crew.models import openai_door

            return await openai_door.acomplete(self, messages, tools)
        litellm = await _aload_litellm()
        kwargs = self._request(messages, tools)

        async def attempt(this: Attempt) -> LLMResponse:
            async with _bounded(self.timeout, "no complete answer", self.model):  # litellm's is per read
                raw = await litellm.acompletion(**kwargs)
                if self.stream:
                    raw = _assembled(litellm, [chunk async for chunk in raw], messages)
            _readable(raw)
            return self._finish(litellm, raw, this.elapsed(), this.number, messages)

        return await self._attempts().run(attempt)

    async def astream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        output_schema: dict[str, Any] | None = None,
    ) -> AsyncIterator[ModelDelta | LLMResponse]:
        """Text deltas as the provider sends them, then the whole :class:`LLMResponse`, exactly once.

        A failure before the first delta is retried like any call; after it, the error is
        final, since retrying would repeat text the caller already has.
        """
        if self.door == "native":
            from crew.models import openai_door

            async for item in openai_door.astream(self, messages, tools):
                yield item
            return
        litellm = await _aload_litellm()
        kwargs = self._request(messages, tools, stream=True)

        async def attempt(this: Attempt) -> AsyncGenerator[ModelDelta | LLMResponse]:
            chunks: list[Any] = []
            async with _bounded(self.timeout, "no answer", self.model):
                replies = aiter(await litellm.acompletion(**kwargs))
            while True:  # a stream may run long, but not ``timeout`` without a chunk
                async with _bounded(self.timeout, "no data", self.model):
                    chunk = await anext(replies, None)
                if chunk is None:
                    break
                chunks.append(chunk)
                text = _delta_text(chunk)
                if text:
                    yield ModelDelta(text=text)
            raw = _assembled(litellm, chunks, messages)
            _readable(raw)
            yield self._finish(litellm, raw, this.elapsed(), this.number, messages, stream=True)

        async for item in self._attempts().stream(attempt):
            yield item

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        output_schema: dict[str, Any] | None = None,
    ) -> LLMResponse:
        """Blocking twin of :meth:`acomplete` (a sync client; safe inside a running loop's threads)."""
        if self.door == "native":
            from crew.models import openai_door

            return openai_door.complete(self, messages, tools)
        litellm = load_litellm()
        kwargs = self._request(messages, tools)

        def attempt(this: Attempt) -> LLMResponse:
            raw = litellm.completion(**kwargs)
            if self.stream:
                raw = _assembled(litellm, list(raw), messages)
            _readable(raw)
            return self._finish(litellm, raw, this.elapsed(), this.number, messages)

        return self._attempts().run_sync(attempt)

    def model_post_init(self, context: Any, /) -> None:
        """Register the key and secret-looking headers: they are scrubbed from every text we emit."""
        register_secret(self.api_key)
        register_url(self.api_base)
        register_headers((self.model_extra or {}).get("extra_headers"))

    def _finish(
        self, litellm: Any, raw: Any, latency: float, attempts: int, messages: Any = None, *, stream: bool = False
    ) -> LLMResponse:
        choice = raw.choices[0]
        message = choice.message
        tool_calls, invalid = split_tool_calls(getattr(message, "tool_calls", None) or [])
        usage = getattr(raw, "usage", None)
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        content = message.content
        if content == "" and (tool_calls or invalid):  # litellm's assembled stream says "": OpenAI, and the
            content = None  # native door, say null for a reply that is only tool calls
        response = LLMResponse(
            content=content,
            tool_calls=tool_calls,
            invalid_tool_calls=invalid,
            usage=Usage(
                prompt_tokens=prompt,
                completion_tokens=completion,
                total_tokens=int(getattr(usage, "total_tokens", 0) or prompt + completion),
                requests=1,
                cost=_cost(litellm, raw),
            ),
            model=self.model,
            latency=latency,
            finish_reason=choice.finish_reason,
        )
        emit_call(response, attempts=attempts, stream=stream or self.stream, transport="litellm", messages=messages)
        return response


def _cost(litellm: Any, raw: Any) -> float:
    """The call's price in USD: litellm's own figure when it made one, else computed; unknown is 0."""
    cost = (getattr(raw, "_hidden_params", None) or {}).get("response_cost")
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
    for choice in getattr(chunk, "choices", None) or []:
        delta = getattr(choice, "delta", None)
        if delta is not None and delta.content:
            return delta.content
    return ""


@contextlib.asynccontextmanager
async def _bounded(seconds: float, what: str, model: str) -> AsyncIterator[None]:
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
    for choice in getattr(chunk, "choices", None) or []:
        delta = getattr(choice, "delta", None)
        if delta is not None and (
            delta.content is not None or getattr(delta, "tool_calls", None) or getattr(delta, "function_call", None)
        ):
            return True
    return False
