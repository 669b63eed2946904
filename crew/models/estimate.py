"""Usage estimated for a reply whose server reported none, so budgets still count it.

A server that ignores ``stream_options.include_usage`` ends its stream without a usage
chunk; reading that as 0 tokens would let a ``--stream`` run pass every token budget.
litellm estimates in that case; the native door does too, at about four characters a
token (no tokenizer: close enough for a budget, and free).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["estimated_usage"]

_PER_MESSAGE = 4
"""Tokens of framing each chat message costs beside its text (role, separators)."""


def _tokens(text: str) -> int:
    return (len(text) + 3) // 4


def _message_tokens(message: Mapping[str, Any]) -> int:
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content, default=str) if content else ""
    calls = message.get("tool_calls")
    return _tokens(text) + (_tokens(json.dumps(calls, default=str)) if calls else 0)


def estimated_usage(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None, reply: Mapping[str, Any]
) -> dict[str, int]:
    """The ``usage`` object a server would have sent for this exchange, estimated."""
    prompt = sum(_PER_MESSAGE + _message_tokens(message) for message in messages)
    if tools:
        prompt += _tokens(json.dumps(list(tools), default=str))
    completion = _message_tokens(reply)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
