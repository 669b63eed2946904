"""Secrets never reach the store: every text written to it passes through one scrubber.

The scrubbing itself is the project's one mechanism, :mod:`crew.common.secrets`; what this
module adds is registering everything a run's crew knows before its first row is
written (the environment's keys, and the ``api_key`` and auth headers of every model
of the crew, also those that are not ``LLM`` objects), and the JSON form the store keeps.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Iterable
from typing import Any

from crew.common.secrets import (
    _KEY_SHAPES,  # pyright: ignore[reportPrivateUsage] - the one list of key shapes, not a copy of it
    MASK,
    register,
    register_environment,
    register_headers,
    registered,
    scrub,
)

_SEAL = re.compile(r"\*\*\*\{secret:([0-9a-f]{16}):([0-9a-f]{32}|unknown)\}")
"""A secret in a sealed text: ``***{secret:SALT:DIGEST}`` (a keyed digest, never the value)."""


class Scrubber:
    """Removes every registered secret (and key-shaped text) from what the store writes."""

    def text(self, value: str | None) -> str | None:
        return scrub(value) if value else value

    def output(self, out: Any) -> str:
        """A pydantic model (a TaskOutput) as JSON text, scrubbed; values pydantic cannot write as their ``str``."""
        try:
            text = out.model_dump_json()
        except ValueError:  # PydanticSerializationError: an arbitrary object in a field
            return self.json(out.model_dump(mode="python"))
        return scrub(text)

    def json(self, value: Any) -> str:
        """``value`` as JSON text, scrubbed (non-JSON values by their ``str``)."""
        return scrub(json.dumps(value, ensure_ascii=False, default=str))

    def sealed_json(self, value: Any) -> str:
        """``value`` as JSON text in which each secret is a reference, not the value.

        What a paused run will run later (a waiting call's arguments, its transcript, a
        person's edited arguments) must come back exactly as it was asked, yet no secret may
        reach the file. A registered secret becomes a salted digest that the resuming process,
        which registers the same environment and model keys, turns back into the value
        (:func:`unseal`); a key-shaped text nobody registered cannot come back and is marked
        ``unknown``, so a resume refuses to run it rather than run ``***``.
        """
        return seal(json.dumps(value, ensure_ascii=False, default=str))


def seal(text: str) -> str:
    """``text`` (JSON) with every registered secret and key-shaped token replaced by a reference."""
    salt = secrets.token_hex(8)
    for value in sorted(registered(), key=len, reverse=True):
        escaped = json.dumps(value, ensure_ascii=False)[1:-1]
        if escaped in text:
            text = text.replace(escaped, f"{MASK}{{secret:{salt}:{_digest(salt, value)}}}")
    return _KEY_SHAPES.sub(f"{MASK}{{secret:{salt}:unknown}}", text)


def unseal(text: str) -> str:
    """``text`` with each reference :func:`seal` made turned back into the secret this process knows.

    A reference this process cannot resolve stays as it is (:func:`sealed_secrets` finds it).
    """
    if MASK + "{secret:" not in text:
        return text
    known: dict[tuple[str, str], str] = {}
    for salt in {m.group(1) for m in _SEAL.finditer(text)}:
        known.update({(salt, _digest(salt, value)): value for value in registered()})

    def back(match: re.Match[str]) -> str:
        value = known.get((match.group(1), match.group(2)))
        return match.group(0) if value is None else json.dumps(value, ensure_ascii=False)[1:-1]

    return _SEAL.sub(back, text)


def sealed_secrets(value: Any) -> bool:
    """Whether ``value`` (as JSON) still holds a secret reference :func:`unseal` could not resolve."""
    return bool(_SEAL.search(json.dumps(value, ensure_ascii=False, default=str)))


def masked(text: str) -> str:
    """A sealed text as it is shown: every reference as ``***``."""
    return _SEAL.sub(MASK, text)


def _digest(salt: str, value: str) -> str:
    return hmac.new(salt.encode(), value.encode(), hashlib.sha256).hexdigest()[:32]


def register_models(models: Iterable[Any]) -> None:
    """Register the keys and auth header values of the given models (objects or settings mappings)."""
    for model in models:
        inner = getattr(model, "wrapped", None) or getattr(model, "inner", None)
        for candidate in (model, inner):
            if candidate is None or isinstance(candidate, str):
                continue
            get = candidate.get if isinstance(candidate, dict) else lambda key, c=candidate: getattr(c, key, None)
            register(get("api_key"))
            extra = getattr(candidate, "model_extra", None) or {}
            register_headers(get("extra_headers") or extra.get("extra_headers"))


def scrubber_for(crew: Any) -> Scrubber:
    """The scrubber of one run of ``crew``, with everything the crew knows registered first."""
    register_environment()
    models: list[Any] = [crew.llm, crew.manager_llm]
    agents = [*crew.all_agents(), *([crew.manager_agent] if crew.manager_agent is not None else [])]
    for agent in agents:
        models += [agent.llm, getattr(agent, "function_calling_llm", None)]
    register_models(models)
    return Scrubber()
