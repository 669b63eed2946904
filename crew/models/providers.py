"""Which providers speak OpenAI's chat-completions protocol, and how a model name names one.

Read alike by the choice of a door (:mod:`crew.models.doors`) and by the native door's
endpoint (:mod:`crew.models.openai_endpoint`): both must agree on what ``groq/...`` means.
Pure data and lookups, no I/O; litellm's provider and model tables are read as data.
"""

from __future__ import annotations

import os
import re

OPENAI_BASE_URL = "https://api.openai.com/v1"

BARE_OPENAI = re.compile(r"^(gpt-|chatgpt-|o[134](?:$|-)|ft:gpt-)", re.I)
"""Model names litellm sends to OpenAI without a prefix: ``gpt-4o``, ``o3-mini``, ``chatgpt-4o-latest``."""

COMPATIBLE = frozenset(
    {
        "openai",
        "custom_openai",
        "openai_like",
        "hosted_vllm",
        "vllm",
        "lm_studio",
        "llamafile",
        "openrouter",
        "groq",
        "together_ai",
        "deepseek",
        "fireworks_ai",
        "xai",
        "perplexity",
    }
)
"""Providers whose endpoint is an OpenAI chat-completions server: native once their ``api_base`` is known."""

OPENAI_KEYED = frozenset({None, "openai", "custom_openai"})
"""Providers (None: a bare name) whose key is ``OPENAI_API_KEY``, as litellm reads it; so is a model id
whose slash names no provider (it goes to the OpenAI-compatible server of ``OPENAI_BASE_URL``)."""

V1_COMPATIBLE = frozenset({"ollama", "ollama_chat"})
"""Providers with a native API of their own and an OpenAI one under ``/v1`` (Ollama)."""


def split_provider(model: str) -> tuple[str | None, str]:
    """``"openai/gpt-4o"`` -> ``("openai", "gpt-4o")``; a bare name has no provider."""
    provider, sep, rest = model.partition("/")
    if sep and rest:
        return provider.lower(), rest
    return None, model


def env_base() -> str | None:
    return os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")


def unknown_provider(provider: str) -> bool:
    """Whether litellm would refuse ``provider/...`` ("LLM Provider NOT provided"); False when its table is absent."""
    from crew.models.pricing import litellm_providers

    known = litellm_providers()
    return bool(known) and provider not in known


def unknown_model(model: str) -> bool:
    """Whether litellm has no route for the bare name (its model table does not list it); False without the table."""
    from crew.models import pricing

    return bool(pricing.table()) and pricing.model_info(model) is None
