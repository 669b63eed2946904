"""Budgets: a run stops before a model call that would start past its ``max_tokens`` or ``max_cost``.

A ``Budget`` is a ``before_call`` hook of the run's meter (the one door every model call
passes through): it reads what the run has spent from the meter's usage ledger (plus,
on a resume, what the runs it continues had spent, so a budget caps the whole piece of
work) and refuses a call once a budget is spent. Calls already in flight when the budget
is reached finish: nothing paid for is thrown away. Cost is the models' own figure
(litellm's bundled price table, or the native transport's), never fetched from the network.
"""

from __future__ import annotations

from typing import Any

from crew.common.events import current_origin
from crew.common.usage import Usage
from crew.errors import BudgetExceededError


class Budget:
    """What one run may spend; ``spent`` is what it had spent at its latest model call."""

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

    def before_call(self, info: Any, meter: Any) -> None:
        """The run meter's hook: raise ``BudgetExceededError`` when the run has already spent a whole budget."""
        ledger = meter.ledger
        spent = self.before + Usage(total_tokens=ledger.total_tokens, cost=ledger.cost)
        self.spent = spent
        model = f"agent '{info.agent}'" if getattr(info, "agent", "") else None
        if self.max_tokens is not None and spent.total_tokens >= self.max_tokens:
            self._stop("max_tokens", self.max_tokens, f"{self.max_tokens:,} tokens", model, spent)
        if self.max_cost is not None and spent.cost >= self.max_cost:
            self._stop("max_cost", self.max_cost, f"${self.max_cost:.4f}", model, spent)

    def _stop(self, name: str, limit: float, shown: str, model: str | None, spent: Usage) -> None:
        scope = current_origin()
        where = f" for task '{scope.task}'" if scope is not None and scope.task else ""
        before = ""
        if self.continued_from and (self.before.total_tokens or self.before.cost):
            before = (
                f", of which {self.before.total_tokens:,} tokens (${self.before.cost:.4f}) "
                f"were spent by run {self.continued_from[:12]}"
            )
        raise BudgetExceededError(
            f"budget {name}={shown} reached before a model call of {model or 'an agent'}{where}: the run has spent "
            f"{spent.total_tokens:,} tokens (${spent.cost:.4f}){before}; raise {name} to go on "
            "(`crew resume --max-tokens/--max-cost` continues the run)",
            budget=name,
            limit=limit,
            spent=spent,
            task=scope.task if scope is not None else None,
        )
