"""Budgets: a run stops before a model call that would start past its ``max_tokens`` or ``max_cost``.

A ``Budget`` counts what the run's models spent (and, on a resume, what the run it
continues had spent, so a budget caps the whole piece of work); ``Budgeted`` wraps each
of the run's chat models and checks the budget before every call. Calls already in
flight when the budget is reached finish: nothing paid for is thrown away. Cost is
litellm's figure from its bundled price table (no network).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from typing import Any

from crew.errors import BudgetExceededError
from crew.events import current_scope
from crew.usage import Usage

Messages = list[dict[str, Any]]


class Budget:
    """What one run may spend and has spent; thread-safe (sync tools call models from threads)."""

    def __init__(
        self,
        *,
        max_tokens: int | None = None,
        max_cost: float | None = None,
        spent_before: Usage | None = None,
        continued_from: str | None = None,
    ) -> None:
        self.max_tokens = max_tokens
        self.max_cost = max_cost
        self.before = spent_before or Usage()
        self.continued_from = continued_from
        self.spent = self.before
        self._lock = threading.Lock()

    @classmethod
    def of(cls, crew: Any, *, spent_before: Usage | None = None, continued_from: str | None = None) -> Budget | None:
        if crew.max_tokens is None and crew.max_cost is None:
            return None
        return cls(
            max_tokens=crew.max_tokens,
            max_cost=crew.max_cost,
            spent_before=spent_before,
            continued_from=continued_from,
        )

    def add(self, usage: Usage) -> None:
        with self._lock:
            self.spent = self.spent + usage

    def check(self, model: str | None) -> None:
        """Raise ``BudgetExceededError`` when the run has already spent a whole budget."""
        spent = self.spent
        if self.max_tokens is not None and spent.total_tokens >= self.max_tokens:
            self._stop("max_tokens", self.max_tokens, f"{self.max_tokens:,} tokens", model, spent)
        if self.max_cost is not None and spent.cost >= self.max_cost:
            self._stop("max_cost", self.max_cost, f"${self.max_cost:.4f}", model, spent)

    def _stop(self, name: str, limit: float, shown: str, model: str | None, spent: Usage) -> None:
        scope = current_scope()
        where = f" of task '{scope.task}'" if scope is not None and scope.task else ""
        before = ""
        if self.continued_from and (self.before.total_tokens or self.before.cost):
            before = (
                f", of which {self.before.total_tokens:,} tokens (${self.before.cost:.4f}) "
                f"were spent by run {self.continued_from[:12]}"
            )
        raise BudgetExceededError(
            f"budget {name}={shown} reached before a call to {model or 'the model'}{where}: the run has spent "
            f"{spent.total_tokens:,} tokens (${spent.cost:.4f}){before}; raise {name} to go on "
            "(`crew resume --max-tokens/--max-cost` continues the run)",
            budget=name,
            limit=limit,
            spent=spent,
            task=scope.task if scope is not None else None,
        )


class Budgeted:
    """A ChatModel that asks the run's budget before each call and adds up what each call spent."""

    def __init__(self, inner: Any, budget: Budget) -> None:
        self.inner = inner
        self.wrapped = inner
        self.budget = budget
        self.model = getattr(inner, "model", "")

    @property
    def supports_function_calling(self) -> bool:
        return self.inner.supports_function_calling

    async def acomplete(self, messages: Messages, tools: Messages | None = None, **kw: Any) -> Any:
        self.budget.check(self.model)
        response = await self.inner.acomplete(messages, tools, **kw)
        self.budget.add(response.usage)
        return response

    async def astream(self, messages: Messages, tools: Messages | None = None, **kw: Any) -> AsyncIterator[Any]:
        """The streaming contract: pieces of text, then the whole reply (whose usage is counted)."""
        self.budget.check(self.model)
        stream = getattr(self.inner, "astream", None)
        if stream is None:
            response = await self.inner.acomplete(messages, tools, **kw)
            self.budget.add(response.usage)
            yield response
            return
        async for item in stream(messages, tools, **kw):
            if hasattr(item, "usage"):
                self.budget.add(item.usage)
            yield item

    def complete(self, messages: Messages, tools: Messages | None = None, **kw: Any) -> Any:
        self.budget.check(self.model)
        response = self.inner.complete(messages, tools, **kw)
        self.budget.add(response.usage)
        return response
