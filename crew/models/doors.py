"""Which door a model call takes: the native OpenAI-protocol transport, or litellm.

Most traffic speaks OpenAI's chat-completions protocol (OpenAI itself, vLLM, Ollama's
``/v1``, LM Studio, llama.cpp, OpenRouter, Groq, Together, DeepSeek, gateways), and for
it the native transport (:mod:`crew.models.openai_door`, plain httpx) answers without
litellm's seconds of import and ~200 MB. Everything else goes to litellm. The decision is
pure (no I/O): the crew's prewarm, ``crew validate`` and the call itself read it alike.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from crew.errors import ConfigError

Transport = Literal["litellm", "native", "auto"]
Door = Literal["litellm", "native"]

OPENAI_BASE_URL = "https://api.openai.com/v1"

_BARE_OPENAI = re.compile(r"^(gpt-|chatgpt-|o[134](?:$|-)|ft:gpt-)", re.I)
"""Model names litellm sends to OpenAI without a prefix: ``gpt-4o``, ``o3-mini``, ``chatgpt-4o-latest``."""

_COMPATIBLE = frozenset(
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

_OPENAI_KEYED = frozenset({None, "openai", "custom_openai"})
"""Providers (None: a bare name) whose key is ``OPENAI_API_KEY``, as litellm reads it; so is a model id
whose slash names no provider (it goes to the OpenAI-compatible server of ``OPENAI_BASE_URL``)."""

_V1_COMPATIBLE = frozenset({"ollama", "ollama_chat"})
"""Providers with a native API of their own and an OpenAI one under ``/v1`` (Ollama)."""


def split_provider(model: str) -> tuple[str | None, str]:
    """``"openai/gpt-4o"`` -> ``("openai", "gpt-4o")``; a bare name has no provider."""
    provider, sep, rest = model.partition("/")
    if sep and rest:
        return provider.lower(), rest
    return None, model


def model_name_problem(name: str) -> str | None:
    """What is wrong with a model name, said before anything runs; None when nothing is.

    ``openai/`` or ``/gpt-4o`` would otherwise fail only at the first call, on every task,
    as a provider's confusing credentials or routing error.
    """
    provider, slash, rest = name.strip().partition("/")
    if not provider:
        return "the model name is empty" if not slash else f"model {name!r} has no provider before '/'"
    if slash and not rest.strip("/ "):
        return f"model {name!r} names the provider {provider!r} but no model after it: write '{provider}/<model>'"
    return None


def choose(model: str, api_base: str | None, transport: Transport = "auto") -> Door:
    """The door ``auto`` picks, or the one asked for.

    Native: ``openai/<model>``; a bare OpenAI model name; a bare name with an
    ``api_base``; an OpenAI-compatible provider (vLLM, OpenRouter, Groq ...) with an
    ``api_base``; Ollama with an ``api_base`` ending in ``/v1``; a model litellm cannot
    route (an id whose slash names no provider it knows, a bare name it does not know)
    with an ``api_base`` or ``OPENAI_BASE_URL``. Everything else: litellm.
    """
    if transport != "auto":
        return transport
    provider, _ = split_provider(model)
    if provider == "openai":
        return "native"
    if provider is None:
        if api_base or _BARE_OPENAI.match(model):
            return "native"
        return "native" if _env_base() and _unknown_model(model) else "litellm"
    if api_base and provider in _COMPATIBLE:
        return "native"
    if api_base and provider in _V1_COMPATIBLE and urlsplit(api_base).path.rstrip("/").endswith("/v1"):
        return "native"
    if (api_base or _env_base()) and _unknown_provider(provider):
        return "native"  # ``meta-llama/Llama-3.1-8B`` at a vLLM server: a model id with a slash, not a provider
    return "litellm"


def _env_base() -> str | None:
    return os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")


def _unknown_provider(provider: str) -> bool:
    """Whether litellm would refuse ``provider/...`` ("LLM Provider NOT provided"); False when its table is absent."""
    from crew.models.pricing import litellm_providers

    known = litellm_providers()
    return bool(known) and provider not in known


def _unknown_model(model: str) -> bool:
    """Whether litellm has no route for the bare name (its model table does not list it); False without the table."""
    from crew.models import pricing

    return bool(pricing.table()) and pricing.model_info(model) is None


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
    compatible = provider in _COMPATIBLE or provider in _V1_COMPATIBLE
    wire = name if compatible else model  # an unknown prefix is part of the model's id (``meta-llama/...``)
    # A provider of its own reads only its own key: OpenAI's must never go to OpenRouter or Groq.
    own = compatible and provider not in _OPENAI_KEYED
    env_keys = [f"{provider.upper()}_API_KEY"] if own and provider else ["OPENAI_API_KEY"]
    base = api_base
    if base is None and (provider in (None, "openai") or (not compatible and _unknown_provider(provider))):
        base = _env_base() or OPENAI_BASE_URL
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


def door_of(spec: object) -> str | None:
    """What ``crew validate`` shows for a model spec: its door, ``offline`` for ``test``, ``custom`` for
    any other ChatModel, None for no model."""
    if spec is None:
        return None
    if isinstance(spec, str):
        name = spec.strip()
        return "offline" if name.lower() == "test" else choose(name, None)
    door = getattr(spec, "door", None)
    return door if isinstance(door, str) else "custom"


def model_name(spec: object) -> str:
    return spec.strip() if isinstance(spec, str) else str(getattr(spec, "model", type(spec).__name__))


_prewarm_lock = threading.Lock()
_prewarmed = False


def prewarm_native() -> None:
    """Load the native transport (httpx, ~0.1 s) and the price table in a daemon thread; idempotent.

    Like ``prewarm_litellm``: a crew that will call an OpenAI-protocol model starts this
    when it is built, so the imports overlap loading, validating and prompt building.
    """
    global _prewarmed
    with _prewarm_lock:
        if _prewarmed:
            return
        _prewarmed = True
    threading.Thread(target=_load_native, name="crew-native-import", daemon=True).start()


def _load_native() -> None:
    with contextlib.suppress(Exception):  # the first call imports again and reports the error
        import crew.models.openai_door  # noqa: F401
        from crew.models.pricing import table

        table()
        import anyio  # and this on the first connection  # noqa: F401
        import httpcore  # httpx imports it when its first client is made (~0.1 s with HTTP/2 support)  # noqa: F401
