"""Secrets never reach the store: every text written to it passes through one scrubber.

The secrets a run knows are the values of environment variables whose names look like
credentials and the keys and auth headers of the crew's models (an ``api_key`` in YAML).
This is the one place to swap for a project-wide mechanism when there is one.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH", re.IGNORECASE)
_SECRET_HEADER = re.compile(r"authorization|api[-_]?key|token|secret", re.IGNORECASE)
_MIN_LENGTH = 8  # shorter values ("1", "true") would blank ordinary text
MASK = "***"


class Scrubber:
    """Replaces every known secret value with ``***``."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        found = {s for s in secrets if isinstance(s, str) and len(s) >= _MIN_LENGTH}
        self.secrets = sorted(found, key=len, reverse=True)  # longest first: a key containing another

    def text(self, value: str | None) -> str | None:
        if not value or not self.secrets:
            return value
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        return value

    def json(self, value: Any) -> str:
        """``value`` as JSON text, scrubbed (non-JSON values by their ``str``)."""
        return self.text(json.dumps(value, ensure_ascii=False, default=str)) or ""

    def value(self, value: Any) -> Any:
        """A JSON-like value with secrets removed from every string in it."""
        if not self.secrets:
            return value
        return json.loads(self.json(value))


def environment_secrets(environ: dict[str, str] | None = None) -> list[str]:
    env = os.environ if environ is None else environ
    return [value for name, value in env.items() if _SECRET_NAME.search(name)]


def model_secrets(models: Iterable[Any]) -> list[str]:
    """Keys and auth header values of the given models (``LLM`` objects or settings mappings)."""
    out: list[str] = []
    for model in models:
        seen = model.wrapped if hasattr(model, "wrapped") else getattr(model, "inner", model)
        for candidate in {id(model): model, id(seen): seen}.values():
            out.extend(_secrets_of(candidate))
    return out


def _secrets_of(model: Any) -> list[str]:
    if model is None or isinstance(model, str):
        return []
    get = model.get if isinstance(model, dict) else lambda key: getattr(model, key, None)
    out: list[str] = []
    key = get("api_key")
    if key is not None:
        out.append(key.get_secret_value() if hasattr(key, "get_secret_value") else str(key))
    extra = getattr(model, "model_extra", None) or {}
    headers = get("extra_headers") or extra.get("extra_headers") or {}
    if isinstance(headers, dict):
        out.extend(str(v) for k, v in headers.items() if _SECRET_HEADER.search(str(k)))
    return out


def scrubber_for(crew: Any) -> Scrubber:
    """The scrubber of one run of ``crew``: environment secrets plus its models' keys."""
    models: list[Any] = [crew.llm, crew.manager_llm]
    agents = [*crew.all_agents(), *([crew.manager_agent] if crew.manager_agent is not None else [])]
    for agent in agents:
        models.append(agent.llm)
        models.append(getattr(agent, "function_calling_llm", None))
    return Scrubber([*environment_secrets(), *model_secrets(models)])
