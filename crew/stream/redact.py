"""Scrubbing streamed text, where a secret may arrive split across two pieces.

Each piece of a model's reply is scrubbed like every other text that leaves the process
(``crew.common.secrets.scrub``), but a registered secret can straddle two pieces: neither
half matches alone. So each call's text keeps back its tail while that tail could be the
start of a registered secret, and no more: a piece that ends in ordinary text goes out
whole, at once, and nothing is ever held longer than the longest secret is long. What
is held goes out with the next piece, or when the call ends.
"""

from __future__ import annotations

from crew.common.secrets import generation, registered, scrub

__all__ = ["DeltaScrubber", "secret_prefix_length"]


def secret_prefix_length(text: str, secrets: frozenset[str]) -> int:
    """The length of the longest end of ``text`` that begins (without completing) one of ``secrets``."""
    longest = 0
    for secret in secrets:
        start = max(len(text) - len(secret) + 1, 0)
        first = secret[0]
        while True:
            at = text.find(first, start)
            if at < 0 or len(text) - at <= longest:
                break
            if secret.startswith(text[at:]):
                longest = len(text) - at
                break
            start = at + 1
    return longest


_known: list[tuple[int, frozenset[str]]] = [(-1, frozenset())]


def _secrets() -> frozenset[str]:
    """The registered secrets, rebuilt only when one was registered since (a piece is scrubbed per token)."""
    now = generation()
    seen, secrets = _known[0]
    if seen != now:
        secrets = registered()
        _known[0] = (now, secrets)
    return secrets


class DeltaScrubber:
    """The scrubbed text of one model call, piece by piece: ``feed`` each piece, ``flush`` at the end."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        """What of the text so far can go out now, scrubbed (maybe ``""``: all of it may start a secret)."""
        text = scrub(self._held + piece)
        secrets = _secrets()
        keep = secret_prefix_length(text, secrets) if secrets else 0
        self._held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep] if keep else text

    def flush(self) -> str:
        """The tail kept back (the call ended, so it completes no secret), scrubbed."""
        held, self._held = self._held, ""
        return scrub(held)
