"""Scrubbing streamed text, where a secret may arrive split across two pieces.

Each piece of a model's reply is scrubbed like every other text that leaves the process
(``crew.common.secrets.scrub``), but a secret can straddle two pieces: neither half
matches alone. So each call's text keeps back its tail while that tail could be the start
of a secret, and no more: a piece that ends in ordinary text goes out whole, at once.
What is held goes out with the next piece, or when the call ends. Two kinds of tail wait:

- the start of a registered secret (never longer than the longest secret is long);
- a key-shaped token nobody registered (``sk-...``, ``ghp_...``; see
  :func:`~crew.common.secrets.key_shape_tail`), or the start of its prefix, while it may
  still be growing: it goes out (masked, if it is a key) once a character that no key
  holds follows it. A token past :data:`HOLD_LIMIT` characters goes out masked at once,
  and the key characters that continue it in later pieces are dropped, so a stream that
  never stops writing one token is never buffered whole.
"""

from __future__ import annotations

from crew.common.secrets import MASK, generation, key_shape_tail, registered, scrub

__all__ = ["HOLD_LIMIT", "DeltaScrubber", "secret_prefix_length"]

HOLD_LIMIT = 512
"""The most characters of one key-shaped token kept back (real keys are under 200)."""

_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


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

    __slots__ = ("_before", "_held", "_masking")

    def __init__(self) -> None:
        self._held = ""  # text not sent yet: the start of a secret, or a key-shaped token still growing
        self._before = ""  # the last character sent: whether a held token starts at a word boundary
        self._masking = False  # a key went out masked before it ended: its remaining characters are dropped

    def feed(self, piece: str) -> str:
        """What of the text so far can go out now, scrubbed (maybe ``""``: all of it may start a secret)."""
        if self._masking:
            piece = self._rest_of_key(piece)
        raw = self._held + piece
        token = key_shape_tail(raw, self._before)
        if token > HOLD_LIMIT:
            self._masking = scrub(raw[len(raw) - token :]).endswith(MASK)
            token = 0
        head, tail = raw[: len(raw) - token], raw[len(raw) - token :]
        text = scrub(head)
        secrets = _secrets()
        keep = secret_prefix_length(text, secrets) if secrets else 0
        out = text[: len(text) - keep]
        self._held = text[len(text) - keep :] + tail
        if out:
            self._before = out[-1]
        return out

    def flush(self) -> str:
        """The tail kept back (the call ended, so it completes nothing more), scrubbed."""
        held, self._held, self._masking = self._held, "", False
        return scrub(held)

    def _rest_of_key(self, piece: str) -> str:
        """``piece`` without the key characters that continue a key already sent masked."""
        at = 0
        while at < len(piece) and piece[at] in _KEY_CHARS:
            at += 1
        if at < len(piece):
            self._masking = False
        return piece[at:]
