"""Which door a model call takes: the native OpenAI-protocol transport, or litellm.

Most traffic speaks OpenAI's chat-completions protocol (OpenAI itself, vLLM, Ollama's
``/v1``, LM Studio, llama.cpp, OpenRouter, Groq, Together, DeepSeek, gateways), and for
it the native transport (:mod:`crew.models.openai_door`, plain httpx) answers without
litellm's seconds of import and ~200 MB. Everything else goes to litellm. The decision is
pure (no I/O): the crew's prewarm, ``crew validate`` and the call itself read it alike.
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from crew.models.providers import (
    BARE_OPENAI,
    COMPATIBLE,
    V1_COMPATIBLE,
    env_base,
    split_provider,
    unknown_model,
    unknown_provider,
)

if TYPE_CHECKING:
    from crew.models.settings import CallSettings, ModelDoor

Transport = Literal["litellm", "native", "auto"]
Door = Literal["litellm", "native"]


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
    speaks_openai = _bare_speaks_openai(model, api_base) if provider is None else _speaks_openai(provider, api_base)
    return "native" if speaks_openai else "litellm"


def _bare_speaks_openai(model: str, api_base: str | None) -> bool:
    """A bare name: an OpenAI model, anything at an ``api_base``, or a name litellm has no route for
    when ``OPENAI_BASE_URL`` says where an OpenAI-compatible server is."""
    return bool(api_base or BARE_OPENAI.match(model) or (env_base() and unknown_model(model)))


def _speaks_openai(provider: str, api_base: str | None) -> bool:
    if api_base and provider in COMPATIBLE:
        return True
    if api_base and provider in V1_COMPATIBLE and urlsplit(api_base).path.rstrip("/").endswith("/v1"):
        return True
    # ``meta-llama/Llama-3.1-8B`` at a vLLM server: a model id with a slash, not a provider
    return bool(api_base or env_base()) and unknown_provider(provider)


def open_door(door: Door, settings: CallSettings) -> ModelDoor:
    """The door object for one call; its module is imported on the first call that takes it."""
    if door == "native":
        from crew.models.openai_door import NativeDoor

        return NativeDoor(settings)
    from crew.models.litellm_door import LitellmDoor

    return LitellmDoor(settings)


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
    """Load the native transport (aiohttp, ~0.1 s) and the price table in a daemon thread; idempotent.

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
        import importlib

        from crew.models.pricing import table

        importlib.import_module("crew.models.openai_door")
        table()
