"""Secrets never reach the store: every text written to it passes through one scrubber.

The scrubbing itself is the project's one mechanism, :mod:`crew.common.secrets`; what this
module adds is registering everything a run's crew knows before its first row is
written (the environment's keys, and the ``api_key`` and auth headers of every model
of the crew, also those that are not ``LLM`` objects), and the JSON form the store keeps.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from crew.common.secrets import register, register_environment, register_headers, scrub


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
