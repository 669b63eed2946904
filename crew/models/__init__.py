"""The model layer: the ChatModel contract, ``LLM`` and its two transports, wrappers, retries, rate limits.

- ``base``: the contract (``ChatModel``: ``acomplete`` required, ``astream`` optional)
  and what crosses it (``LLMResponse``, ``ModelDelta``, ``InvalidToolCall``).
- ``calling``: ``stream_reply`` (``astream`` or a one-item fallback) and ``complete_sync``.
- ``info``: ``ModelCallInfo``, what a call is for (agent, task, turn, tools).
- ``wrapped``: ``WrappedModel``, the base of models that decorate another (``.wrapped``).
- ``llm``: ``LLM``, the user's configuration object. Each call reads it once into
  ``settings.CallSettings`` and hands them to a door (``settings.ModelDoor``) that
  ``doors`` picks: ``openai_door`` (the OpenAI protocol over aiohttp: ``openai_endpoint``
  says where, ``openai_pool`` over which connections, ``openai_wire`` what goes over the
  wire, ``openai_errors`` what fails and how much a reply may hold) or ``litellm_door``
  (litellm, imported by ``litellm_loading``).
  ``providers``: which providers speak the OpenAI protocol.
- ``resolve``: ``as_chat_model``, which turns ``llm=...`` into a model.
- ``pricing``: litellm's bundled price table read as data; ``failures``: errors both doors share.
- ``retry``, ``ratelimit``: backoff policy; request budgets and ``Throttled``.
- ``attempts``: the attempt loop both doors run; a door only says how to make one attempt.

An agent talks to a model only through the contract. Importing this package imports
neither aiohttp, httpx nor litellm: litellm comes on the first call that needs it, or in the background when
:func:`prewarm_litellm` is asked to.
"""

from __future__ import annotations

from crew.models.base import ChatModel, InvalidToolCall, LLMResponse, ModelDelta, StreamingChatModel
from crew.models.calling import complete_sync, stream_reply
from crew.models.info import ModelCallInfo, current_call
from crew.models.litellm_loading import litellm_loaded, load_litellm, prewarm_litellm
from crew.models.llm import LLM
from crew.models.ratelimit import RateLimiter, Throttled
from crew.models.resolve import as_chat_model
from crew.models.wrapped import WrappedModel, innermost

__all__ = [
    "LLM",
    "ChatModel",
    "InvalidToolCall",
    "LLMResponse",
    "ModelCallInfo",
    "ModelDelta",
    "RateLimiter",
    "StreamingChatModel",
    "Throttled",
    "WrappedModel",
    "as_chat_model",
    "complete_sync",
    "current_call",
    "innermost",
    "litellm_loaded",
    "load_litellm",
    "prewarm_litellm",
    "stream_reply",
]
