"""Token and cost accounting shared by every layer.

It lives at the bottom of the package so that the LLM layer, task outputs and the
crew can all add usage up without importing each other.
"""

from __future__ import annotations

from pydantic import BaseModel


class Usage(BaseModel):
    """Tokens, requests and cost of one or more model calls; ``+`` adds them up."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    requests: int = 0
    cost: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            requests=self.requests + other.requests,
            cost=self.cost + other.cost,
        )

    @classmethod
    def total(cls, usages: list[Usage] | tuple[Usage, ...]) -> Usage:
        out = cls()
        for u in usages:
            out = out + u
        return out
