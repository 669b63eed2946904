"""What a failed model call becomes: a wait before the next attempt, or one clear LLMError.

Both transports (litellm and the native OpenAI one) report failures through here, so a
rate limit, a dead server or a bad key reads the same whichever door the call took, and
no credential reaches an error, an event or a log record on either (:mod:`crew.common.secrets`
does the scrubbing; the call's own key is registered with it first).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NoReturn

from crew.common.events import bus
from crew.common.secrets import register, register_environment
from crew.common.secrets import scrub as scrub_known
from crew.errors import LLMError
from crew.models.retry import RetryPolicy


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` without any credential: ``secrets``, secret-named env vars, and anything shaped like a key."""
    for secret in secrets:
        register(secret)
    register_environment()
    return scrub_known(text)


def describe(exc: BaseException) -> str:
    """``Kind (HTTP n): message`` without litellm's repeated ``litellm.Kind: Kind:`` prefixes
    and without the traceback text litellm sometimes pastes into its messages."""
    text = re.sub(r"^litellm\.(\w+):\s*(?:\1:\s*)?", "", str(exc))
    text = text.split("Traceback (most recent call last)", 1)[0].rstrip(" \n:")
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
    if delay is None:
        give_up(model, exc, attempts, why, secrets=secrets)
    cause = scrub(describe(exc), secrets)
    bus.emit("llm.retry", model=model, attempt=attempts, delay=round(delay, 3), reason=why, error=shorten(cause, 200))
    return delay


def give_up(model: str, exc: Exception, attempts: int, why: str, *, secrets: Iterable[str | None] = ()) -> NoReturn:
    """The final ``LLMError`` (and its ``llm.error`` event), saying why no attempt is left."""
    described = describe(exc)
    cause = scrub(described, secrets)
    bus.emit("llm.error", model=model, attempts=attempts, error=cause, reason=why)
    error = LLMError(f"LLM call to {model!r} failed after {attempts} attempt(s) ({why}): {shorten(cause)}", model=model)
    # chain the original for callers that inspect it, unless its text holds a secret
    error.__cause__ = exc if cause == described else None
    raise error
