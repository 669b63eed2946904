"""The secrets a process knows, and the one function that removes them from text.

Every text that leaves the process (errors, observations sent to a model, outputs,
events, logs, files, the CLI's stdout and stderr) passes through :func:`scrub`. It
replaces every registered secret value, and anything shaped like a well-known API key
(``sk-...``, ``ghp_...``, ``AKIA...``), with ``***``: a key pasted into the wrong YAML
field is not a registered secret, but it must not be echoed either.

What is registered: the values of environment variables whose names look secret
(``OPENAI_API_KEY``, ``AWS_SECRET_ACCESS_KEY``; read when this module loads and again by
:func:`register_environment`, which every kickoff and every CLI command call, so a key set
later counts too, while :func:`scrub` itself stays cheap enough for every tool call),
``api_key`` values and ``extra_headers`` values of models, and values substituted for
``${VAR}`` whose names look secret. Values shorter than 8 characters are never
registered: replacing ``"1"`` everywhere would ruin texts and hide nothing.

This module is at the bottom layer (imports nothing of crew), so any layer may use it.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from typing import Any

__all__ = [
    "generation",
    "looks_secret",
    "register",
    "register_environment",
    "register_headers",
    "registered",
    "scrub",
    "scrub_data",
]

MASK = "***"
MIN_LENGTH = 8

_SECRET_NAME = re.compile(
    r"(?:^|[_\-.])(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)(?:$|[_\-.])", re.IGNORECASE
)
_SECRET_HEADER = re.compile(r"key|token|secret|auth|password|cookie|signature", re.I)
# Shapes of well-known credentials: found even when nobody registered them.
_KEY_SHAPES = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|AKIA[0-9A-Z]{16}"
    r"|AIza[0-9A-Za-z_\-]{30,}"
    r"|hf_[A-Za-z0-9]{20,})"
)

_SHAPE_PREFIXES = ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AKIA", "AIza", "hf_")
"""Every key shape starts with one of these: a substring test (C speed) skips the regex for most texts."""
_SHORTEST_SHAPE = 15
"""The fewest characters any key shape matches (``xox?-`` and ten more): a shorter text holds none."""

_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
"""The characters of every key shape after its prefix: the trailing run of them is where a key may be growing."""
_SHAPE_STARTS = frozenset(prefix[0] for prefix in _SHAPE_PREFIXES)

_lock = threading.Lock()
_values: set[str] = set()
_pattern: re.Pattern[str] | None = None
_env_seen: dict[str, str] = {}
_env_snapshot: list[dict[Any, Any] | None] = [None]
"""The raw environment as ``register_environment`` last read it: unchanged, there is nothing to read."""
_generation = [0]


def looks_secret(name: str) -> bool:
    """Whether a variable or setting name looks like it holds a credential (``OPENAI_API_KEY``, ``db_password``)."""
    return bool(_SECRET_NAME.search(name))


def register_url(url: str | None) -> None:
    """Register the credentials a URL may carry: its password, and query values under secret-looking
    names (``?api-key=...``). A server's error may quote the URL it was sent, query included."""
    if not url or ("@" not in url and "?" not in url):
        return
    from urllib.parse import parse_qsl, urlsplit

    parts = urlsplit(url)
    register(parts.password)
    for name, value in parse_qsl(parts.query):
        if _SECRET_NAME.search(name) or _SECRET_HEADER.search(name):
            register(value)


def register(value: Any) -> None:
    """Remember a secret value (a str or pydantic ``SecretStr``); short or empty values are ignored."""
    getter = getattr(value, "get_secret_value", None)
    if callable(getter):
        value = getter()
    if not isinstance(value, str) or len(value.strip()) < MIN_LENGTH:
        return
    global _pattern
    with _lock:
        if value not in _values:
            _values.add(value)
            _pattern = None
            _generation[0] += 1


def register_headers(headers: Any) -> None:
    """Register the values of request headers whose names look secret (``X-Api-Key``, ``Authorization``).

    ``Authorization: Bearer <token>`` registers the token too, since errors quote it alone.
    """
    if not isinstance(headers, Mapping):
        return
    for name, value in headers.items():
        if isinstance(name, str) and _SECRET_HEADER.search(name) and isinstance(value, str):
            register(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                register(token)


def generation() -> int:
    """A number that changes whenever a secret is registered: a text scrubbed at one generation
    is still clean while the number stays the same (hot paths keep scrubbed texts by it)."""
    return _generation[0]


def registered() -> frozenset[str]:
    """Every secret value known now."""
    with _lock:
        return frozenset(_values)


def scrub(text: str) -> str:
    """``text`` with every known secret and every key-shaped token replaced by ``***``."""
    if not isinstance(text, str) or len(text) < MIN_LENGTH:  # no secret is that short ("user", "tool", "42")
        return text
    pattern = _pattern if _pattern is not None or not _values else _current_pattern()
    if pattern is not None:
        text = pattern.sub(MASK, text)
    if len(text) < _SHORTEST_SHAPE:  # most tool results of tiny tools: no scan at all
        return text
    for prefix in _SHAPE_PREFIXES:
        if prefix in text:
            return _KEY_SHAPES.sub(MASK, text)
    return text


def key_shape_tail(text: str, before: str = "") -> int:
    """The length of the end of ``text`` that is, or could still grow into, a key-shaped token.

    That end starts at a word boundary (``before`` is the character that came before
    ``text``, for a text that continues another) and either begins with a key shape's
    prefix (``sk-``, ``ghp_``, ``AKIA``...) followed only by key characters, or is the start
    of such a prefix (``sk``). A streamed piece that ends there may be a key cut in two,
    which neither half shows. 0 when the text ends otherwise.
    """
    start = len(text)
    while start and text[start - 1] in _KEY_CHARS:
        start -= 1
    for at in range(start, len(text)):
        char = text[at]
        if char not in _SHAPE_STARTS:
            continue
        previous = text[at - 1] if at > 0 else before
        if previous and (previous.isalnum() or previous == "_"):
            continue  # no word boundary: ``task-`` is not ``sk-``
        tail = text[at:]
        if any(tail.startswith(prefix) or prefix.startswith(tail) for prefix in _SHAPE_PREFIXES):
            return len(tail)
    return 0


def public_url(url: str) -> str:
    """``url`` as it may be shown: no user, password, query or fragment (where keys ride along)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def scrub_data(value: Any, _depth: int = 0) -> Any:
    """``scrub`` applied to every string inside dicts, lists and tuples (other values kept)."""
    if isinstance(value, str):
        return scrub(value)
    if _depth > 50:
        return value
    if isinstance(value, dict):
        return {k: scrub_data(v, _depth + 1) for k, v in value.items()}
    if type(value) in (list, tuple):
        return type(value)(scrub_data(v, _depth + 1) for v in value)
    return value


def register_environment() -> None:
    """Register the environment variables whose names look secret (new or changed ones count).

    Every kickoff calls this: an environment unchanged since the last call (one dict
    comparison, in C) costs nothing more; decoding and matching every variable again cost
    about 0.1 ms a kickoff, a tenth of a batch's own work per kickoff.
    """
    raw = getattr(os.environ, "_data", None)  # the bytes (POSIX) or str (Windows) behind os.environ
    if raw is not None and raw == _env_snapshot[0]:
        return
    snapshot = None if raw is None else dict(raw)  # taken first: a change while reading is read next time
    for name, value in list(os.environ.items()):
        if _env_seen.get(name) != value:
            _env_seen[name] = value
            if _SECRET_NAME.search(name):
                register(value)
    _env_snapshot[0] = snapshot


def _current_pattern() -> re.Pattern[str] | None:
    global _pattern
    with _lock:
        if _pattern is None and _values:
            alternatives = sorted(_values, key=len, reverse=True)  # longest first: no partial masks
            _pattern = re.compile("|".join(map(re.escape, alternatives)))
        return _pattern


register_environment()
