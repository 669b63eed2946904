"""Where a native call goes: the base URL, the model's name on the wire, and the key.

The LLM's own settings first, then the environment litellm reads too, so both doors reach
the same server with the same key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from crew.errors import ConfigError
from crew.models.providers import (
    COMPATIBLE,
    OPENAI_BASE_URL,
    OPENAI_KEYED,
    V1_COMPATIBLE,
    env_base,
    split_provider,
    unknown_provider,
)


@dataclass(frozen=True)
class Endpoint:
    """Where a native call goes: the base URL, the model name on the wire, the key and where it came from."""

    base_url: str
    wire_model: str
    api_key: str | None
    key_source: str

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"


def endpoint(model: str, api_base: str | None, api_key: str | None) -> Endpoint:
    """The LLM's settings, else the environment litellm reads too (``OPENAI_BASE_URL`` / ``OPENAI_API_BASE``,
    ``OPENAI_API_KEY``, ``<PROVIDER>_API_KEY``), so both doors reach the same server with the same key."""
    provider, name = split_provider(model)
    compatible = provider in COMPATIBLE or provider in V1_COMPATIBLE
    wire = name if compatible else model  # an unknown prefix is part of the model's id (``meta-llama/...``)
    # A provider of its own reads only its own key: OpenAI's must never go to OpenRouter or Groq.
    own = compatible and provider not in OPENAI_KEYED
    env_keys = [f"{provider.upper()}_API_KEY"] if own and provider else ["OPENAI_API_KEY"]
    base = api_base
    if base is None and (provider in (None, "openai") or (not compatible and unknown_provider(provider))):
        base = env_base() or OPENAI_BASE_URL
    if base is None:
        raise ConfigError(
            f"model {model!r}: the native transport needs an api_base for provider {provider!r} "
            "(or use transport: litellm)"
        )
    if api_key is not None:
        return Endpoint(base, wire, api_key, "api_key")
    for env in env_keys:
        value = os.environ.get(env)
        if value:
            return Endpoint(base, wire, value, env)
    return Endpoint(base, wire, None, " or ".join(dict.fromkeys(env_keys)))
