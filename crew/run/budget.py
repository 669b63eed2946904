"""Budgets: a run stops before a model call that would start past its ``max_tokens`` or ``max_cost``.

A ``Budget`` is a ``before_call`` hook of the run's meter (the one door every model call
passes through): it reads what the run has spent from the meter's usage ledger (plus,
on a resume, what the runs it continues had spent, so a budget caps the whole piece of
work) and refuses a call once a budget is spent. Calls already in flight when the budget
is reached finish: nothing paid for is thrown away. Cost is the models' own figure
(litellm's bundled price table, or the native transport's), never fetched from the network.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar
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

    what = "the run"
    """Who spends it, as its message says."""

    def before_call(self, info: Any, meter: Any) -> None:
        """The run meter's hook: raise ``BudgetExceededError`` when the run has already spent a whole budget."""
        spent = self.before + self._spending(meter)
        self.spent = spent
        model = f"agent '{info.agent}'" if getattr(info, "agent", "") else None
        if self.max_tokens is not None and spent.total_tokens >= self.max_tokens:
            self._stop("max_tokens", self.max_tokens, f"{self.max_tokens:,} tokens", model, spent)
        if self.max_cost is not None and spent.cost >= self.max_cost:
            self._stop("max_cost", self.max_cost, f"${self.max_cost:.4f}", model, spent)

    def _spending(self, meter: Any) -> Usage:
        ledger = meter.ledger
        return Usage(total_tokens=ledger.total_tokens, cost=ledger.cost)

    def _stop(self, name: str, limit: float, shown: str, model: str | None, spent: Usage) -> None:
        scope = current_origin()
        where = f" for task '{scope.task}'" if scope is not None and scope.task else ""
        if scope is not None and scope.within is not None:
            where += f" in step '{scope.within[1]}'"
        before = ""
        if self.continued_from and (self.before.total_tokens or self.before.cost):
            before = (
                f", of which {self.before.total_tokens:,} tokens (${self.before.cost:.4f}) "
                f"were spent by run {self.continued_from[:12]}"
            )
        raise BudgetExceededError(
            f"budget {name}={shown} reached before a model call of {model or 'an agent'}{where}: {self.what} has spent "
            f"{spent.total_tokens:,} tokens (${spent.cost:.4f}){before}; raise {name} to go on "
            "(`crew resume --max-tokens/--max-cost` continues the run)",
            budget=name,
            limit=limit,
            spent=spent,
            task=scope.task if scope is not None else None,
        )


class SharedBudget(Budget):
    """One budget over every run made inside it: a flow run's, whose steps' crews all spend it.

    Each crew run has its own meter; the first model call of one enters its meter here, and
    the budget is checked against what all of them have spent (a finished crew's meter keeps
    its figure), plus what the runs it continues had spent. ``reached`` is the error of the
    first call it refused: the flow stops on it.
    """

    what = "the flow run"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._meters: dict[int, Any] = {}
        """Every meter that spent it, by id (kept alive here, so an id is never reused)."""
        self._lock = threading.Lock()
        self.reached: BudgetExceededError | None = None

    def _spending(self, meter: Any) -> Usage:
        with self._lock:
            self._meters.setdefault(id(meter), meter)
            ledgers = [m.ledger for m in self._meters.values()]
        return Usage(total_tokens=sum(x.total_tokens for x in ledgers), cost=sum(x.cost for x in ledgers))

    def before_call(self, info: Any, meter: Any) -> None:
        try:
            super().before_call(info, meter)
        except BudgetExceededError as exc:
            if self.reached is None:
                self.reached = exc
            raise


shared_budget: ContextVar[SharedBudget | None] = ContextVar("crew_shared_budget", default=None)
"""The budget of the flow run whose step is running (``crew.flow``): every crew kicked off inside
it spends it, beside any budget of its own (``crew.run.kickoff.CrewRun``)."""
