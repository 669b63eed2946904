"""The model layer: the ChatModel contract, ``LLM`` and its two transports, retries, rate limits.

An agent talks to a model only through :class:`ChatModel` (``crew.models.base``). ``LLM``
(``crew.models.litellm_model``) is the user's configuration object; its calls take one of
two doors (``crew.models.transport``): the native OpenAI-protocol transport over httpx
(``crew.models.openai_http``) or litellm. Importing this package imports neither httpx nor
litellm: litellm comes on the first call that needs it, or in the background when
:func:`prewarm_litellm` is asked to.
"""

from __future__ import annotations

from crew.models.base import ChatModel, InvalidToolCall, LLMResponse, ModelDelta
from crew.models.litellm_model import LLM, litellm_loaded, load_litellm, prewarm_litellm
from crew.models.resolve import as_chat_model

__all__ = [
    "LLM",
    "ChatModel",
    "InvalidToolCall",
    "LLMResponse",
    "ModelDelta",
    "as_chat_model",
    "litellm_loaded",
    "load_litellm",
    "prewarm_litellm",
]
