"""When to retry a failed model call, and how long to wait first.

This is the only retry layer between crew and a provider (litellm's and the
OpenAI SDK's own retries are switched off), so its rules must be the ones a
careful client uses: retry what is transient (rate limits, timeouts, overloaded
or failing servers, dropped connections), never what will fail the same way
again (bad request, auth, unknown model); wait with exponential backoff and
jitter so that many agents hitting one limit do not retry in lockstep; and when
the server says how long to wait (``Retry-After``), wait that long.

The policy is pure (no I/O, no sleeping): the sync and async callers share it.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, cast

_RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


class MalformedResponse(Exception):
    """A reply that could not be read (a stream that ended without a message); transient like a 5xx."""


def is_retryable(exc: BaseException) -> bool:
    """Transient failures: 408/409/425/429, any 5xx, timeouts, dropped connections, unreadable replies.

    litellm maps every provider error to an exception carrying ``status_code``
    (timeouts are 408, connection failures 500), which keeps this test provider-neutral.
    A configuration error the client found before sending anything is never transient,
    even when litellm labels it 500.
    """
    if isinstance(exc, MalformedResponse):
        return True
    if refused_before_sending(exc):
        return False
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in _RETRYABLE_STATUS or status >= 500
    return isinstance(exc, (TimeoutError, ConnectionError))


def refused_before_sending(exc: BaseException) -> bool:
    """Whether the SDK refused the call before any request left (no API key, bad client options).

    The OpenAI SDK (used by litellm for OpenAI and every OpenAI-compatible endpoint)
    raises its bare ``OpenAIError`` for those, and litellm re-raises it as HTTP 500, so
    without this check a missing key would be "retried" with backoff. Errors of a real
    exchange are subclasses (``APIStatusError``, ``APIConnectionError``) and do not match.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        kind = type(current)
        if kind.__name__ == "OpenAIError" and kind.__module__.split(".")[0] == "openai":
            return True
        current = current.__cause__ or current.__context__
    return False


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``Retry-After``), if it said."""
    for headers in _header_sources(exc):
        try:
            millis = headers.get("retry-after-ms")
            if millis is not None:
                return max(0.0, float(millis) / 1000)
            value = headers.get("retry-after")
        except (AttributeError, TypeError, ValueError):
            continue
        if value is None:
            continue
        seconds = _parse_retry_after(str(value))
        if seconds is not None:
            return seconds
    return None


def _header_sources(exc: BaseException) -> list[Any]:
    sources: list[Any] = []
    response = getattr(exc, "response", None)
    if response is not None and getattr(response, "headers", None) is not None:
        sources.append(response.headers)
    for attr in ("litellm_response_headers", "headers"):
        headers = getattr(exc, attr, None)
        if headers:
            sources.append(headers if hasattr(headers, "get") else dict(headers))
    # a plain dict is case-sensitive; give it the lower-case keys httpx would
    return [_lower_keys(cast("dict[object, Any]", h)) if isinstance(h, dict) else h for h in sources]


def _lower_keys(headers: dict[object, Any]) -> dict[str, Any]:
    return {str(key).lower(): value for key, value in headers.items()}


def _parse_retry_after(value: str) -> float | None:
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass(frozen=True)
class RetryPolicy:
    """``retries`` retries after the first attempt, waiting ``base_delay * 2**n`` (jittered).

    ``max_delay`` caps the backoff; a ``Retry-After`` longer than it means the
    provider will not serve us soon, so we give up at once instead of blocking a
    crew for minutes (the error says what the server asked for).
    """

    retries: int = 3
    base_delay: float = 1.0
    max_delay: float = 60.0

    def backoff(self, retry: int, rng: random.Random | None = None) -> float:
        """Delay before retry number ``retry`` (1-based): exponential, "equal jitter" in [d/2, d]."""
        ceiling = min(self.max_delay, self.base_delay * (2 ** (retry - 1)))
        return ceiling * (0.5 + 0.5 * (rng or random).random())

    def next_delay(self, attempts: int, exc: BaseException) -> tuple[float | None, str]:
        """After ``attempts`` failed attempts with ``exc``: (seconds to wait, or None to stop; why)."""
        if refused_before_sending(exc):
            return None, "refused by the client before sending: a configuration problem"
        if not is_retryable(exc):
            return None, "not retryable"
        if attempts > self.retries:
            if not self.retries:
                return None, "retries disabled"
            return None, f"{self.retries} {'retry' if self.retries == 1 else 'retries'} spent"
        asked = retry_after(exc)
        if asked is not None:
            if asked > self.max_delay:
                return None, f"server asked to retry after {asked:g} s (more than max delay {self.max_delay:g} s)"
            return asked, f"Retry-After {asked:g} s"
        return self.backoff(attempts), "backoff"
