"""What a failed model call becomes: a wait before the next attempt, or one clear LLMError.

Both transports (litellm and the native OpenAI one) report failures through here, so a
rate limit, a dead server or a bad key reads the same whichever door the call took, and
no credential reaches an error, an event or a log record on either.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from crew.errors import LLMError
from crew.events import bus
from crew.models.retry import RetryPolicy

_SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
"""Environment variables whose values never show in errors (``OPENAI_API_KEY``, ``AWS_SECRET_ACCESS_KEY``)."""


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every credential we know of (``secrets`` and secret-named env vars) as ``***``."""
    known = {v for k, v in os.environ.items() if k.upper().endswith(_SECRET_SUFFIXES) and len(v) >= 8}
    known.update(s for s in secrets if s)
    for secret in sorted(known, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def describe(exc: BaseException) -> str:
    """``Kind (HTTP n): message`` without litellm's repeated ``litellm.Kind: Kind:`` prefixes."""
    text = re.sub(r"^litellm\.(\w+):\s*(?:\1:\s*)?", "", str(exc))
    status = getattr(exc, "status_code", None)
    kind = type(exc).__name__ + (f" (HTTP {status})" if isinstance(status, int) else "")
    return f"{kind}: {text}" if text else kind


def shorten(text: str, limit: int = 500) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def after_failure(
    model: str, exc: Exception, attempts: int, policy: RetryPolicy, *, secrets: Iterable[str | None] = ()
) -> float:
    """Seconds to wait before the next attempt (an ``llm.retry`` event); raises LLMError when there is none."""
    delay, why = policy.next_delay(attempts, exc)
    described = describe(exc)
    cause = scrub(described, secrets)
    if delay is None:
        bus.emit("llm.error", model=model, attempts=attempts, error=cause, reason=why)
        error = LLMError(
            f"LLM call to {model!r} failed after {attempts} attempt(s) ({why}): {shorten(cause)}", model=model
        )
        # chain the original for callers that inspect it, unless its text holds a secret
        error.__cause__ = exc if cause == described else None
        raise error
    bus.emit("llm.retry", model=model, attempt=attempts, delay=round(delay, 3), reason=why, error=shorten(cause, 200))
    return delay
