"""``LLM``: the user's configuration of a real model, and the door each of its calls takes.

Agents see a :class:`~crew.models.base.ChatModel`: OpenAI-format messages and tools in, an
:class:`~crew.models.base.LLMResponse` out. :class:`LLM` implements it for any provider:
each call reads the LLM once into :class:`~crew.models.settings.CallSettings` and hands
them to the door :func:`crew.models.doors.choose` picks (the native OpenAI protocol over
httpx, or litellm). Neither door is imported before a call needs it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, field_validator, model_validator

from crew.common.secrets import register as register_secret
from crew.common.secrets import register_headers, register_url
from crew.models.base import LLMResponse, ModelDelta
from crew.models.doors import Door, Transport, choose, model_name_problem, open_door
from crew.models.litellm_loading import prewarm_litellm
from crew.models.ratelimit import RateLimiter, shared_limiter
from crew.models.retry import RetryPolicy
from crew.models.settings import DEFAULT_MAX_CONNECTIONS, CallSettings, ModelDoor

__all__ = ["LLM"]


_ALIASES = {"base_url": "api_base", "api_base_url": "api_base", "max_retries": "num_retries"}
"""Other libraries' names for a setting: passed on as they are, they would be ignored or overridden."""


class LLM(BaseModel):
    """A model: ``LLM("openai/gpt-4o-mini", temperature=0)``.

    ``transport`` picks the door its calls take: ``native`` (OpenAI chat completions over
    aiohttp, :mod:`crew.models.openai_door`), ``litellm``, or ``auto`` (the default: native
    for ``openai/...``, bare OpenAI names and OpenAI-compatible ``api_base`` endpoints,
    litellm for the rest; see :func:`crew.models.doors.choose`).

    ``num_retries`` counts retries after the first attempt, on rate limits,
    timeouts and server errors (see :mod:`crew.models.retry`); ``timeout`` bounds each
    attempt. ``max_rpm`` shares one process-wide budget with every LLM naming the
    same model, endpoint and limit; pass ``rate_limiter`` to share one budget
    more widely (e.g. across models of one account). Unknown keyword arguments go
    to the provider as they are (``top_p``, ``seed``, ``response_format``, ``tool_choice``,
    ``parallel_tool_calls``, ``extra_headers``...).
    ``max_connections`` bounds the native door's open connections per endpoint and event loop
    (default 10,000: above any batch's ``max_concurrency``, see docs/scaling.md).
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
    max_connections: int = Field(default=DEFAULT_MAX_CONNECTIONS, ge=1)

    _supports_fc: tuple[str, bool] | None = PrivateAttr(default=None)
    _opened: tuple[tuple[Any, ...], ModelDoor] | None = PrivateAttr(default=None)

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

        settings = cast("dict[object, Any]", data)
        for key in settings:
            if not isinstance(key, str) or key in cls.model_fields:
                continue
            meant = _ALIASES.get(key) or next(iter(difflib.get_close_matches(key, cls.model_fields, 1, 0.8)), None)
            if meant is not None:
                raise ValueError(f"unknown LLM setting {key!r}: did you mean {meant!r}?")
        return settings

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
            known = self._supports_fc = (self.model, self.open().supports_function_calling())
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

    def settings(self) -> CallSettings:
        """What a call takes from this LLM, read once per call (a later ``llm.model = ...`` counts)."""
        return CallSettings(
            model=self.model,
            timeout=self.timeout,
            policy=self.retry_policy,
            limiter=self.limiter,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            api_base=self.api_base,
            api_key=self.api_key.get_secret_value() if self.api_key is not None else None,
            stream=self.stream,
            max_connections=self.max_connections,
            extra=dict(self.model_extra or {}),
        )

    def open(self) -> ModelDoor:
        """The door this call takes, holding the settings it read.

        Kept while the LLM's fields (and its door) are what they were: reading them again
        for each of a batch's thousands of calls cost more than the comparison that says
        nothing changed. A field set later (``llm.model = ...``) is read by the next call.
        """
        door = self.door
        fields = (door, tuple(self.__dict__.items()), tuple((self.model_extra or {}).items()))
        kept = self._opened
        if kept is not None and kept[0] == fields:
            return kept[1]
        opened = open_door(door, self.settings())
        self._opened = (fields, opened)
        return opened

    # -- calls -------------------------------------------------------------
    async def acomplete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        output_schema: dict[str, Any] | None = None,
    ) -> LLMResponse:
        return await self.open().acomplete(messages, tools)

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
        async for item in self.open().astream(messages, tools):
            yield item

    def model_post_init(self, context: Any, /) -> None:
        """Register the key and secret-looking headers: they are scrubbed from every text we emit."""
        register_secret(self.api_key)
        register_url(self.api_base)
        register_headers((self.model_extra or {}).get("extra_headers"))
