"""The model layer: the ChatModel contract, the litellm model, retries, rate limits.

An agent talks to a model only through :class:`ChatModel` (``crew.models.base``); the
litellm implementation (``crew.models.litellm_model``) is one door behind it. Importing
this package never imports litellm: that happens on the first real call, or in the
background when :func:`prewarm_litellm` is asked to.
"""

from __future__ import annotations

from crew.models.base import ChatModel, InvalidToolCall, LLMResponse
from crew.models.litellm_model import LLM, litellm_loaded, load_litellm, prewarm_litellm
from crew.models.resolve import as_chat_model

__all__ = [
    "LLM",
    "ChatModel",
    "InvalidToolCall",
    "LLMResponse",
    "as_chat_model",
    "litellm_loaded",
    "load_litellm",
    "prewarm_litellm",
]
