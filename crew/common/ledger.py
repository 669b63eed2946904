"""One usage ledger per run: every model call's usage, recorded once, with whom it is for.

An entry says which task the work was for, which agent made the call and on which model.
Every figure a run reports is a sum over the entries: a task's usage (all its attempts,
and the work its agent delegated, since a coworker's calls are entered under the task
they serve), an agent's (a coworker is credited with its own calls), a model's, the
run's total. Nothing is subtracted and nothing is counted twice, because nothing is
copied from one figure into another.

Running totals are kept as calls are recorded, so reading the total (a budget check
before every call) or a task's figure costs an attribute or dictionary lookup, not a walk.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from crew.common.usage import Usage

__all__ = ["UsageEntry", "UsageLedger", "UsageSum"]


@dataclass(slots=True)
class UsageEntry:
    """One model call: ``task`` it served (a delegated call: the delegating task), ``agent``, ``model``."""

    task: str | None
    agent: str | None
    model: str | None
    usage: Usage


class UsageSum:
    """A running sum of usages (plain numbers: adding pydantic models per call costs microseconds)."""

    __slots__ = ("completion", "cost", "prompt", "requests", "total")

    def __init__(self) -> None:
        self.prompt = self.completion = self.total = self.requests = 0
        self.cost = 0.0

    def add(self, usage: Usage) -> None:
        self.prompt += usage.prompt_tokens
        self.completion += usage.completion_tokens
        self.total += usage.total_tokens
        self.requests += usage.requests
        self.cost += usage.cost

    def usage(self) -> Usage:
        return Usage(
            prompt_tokens=self.prompt,
            completion_tokens=self.completion,
            total_tokens=self.total,
            requests=self.requests,
            cost=self.cost,
        )


class UsageLedger:
    """The usage of one run's model calls. Thread-safe: calls may finish on any thread.

    The run's total and each task's figure are kept as calls are recorded (a budget reads
    the total before every call, a task's output its figure); the per-agent and per-model
    breakdowns, read once when the run ends, are summed from the entries then.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[tuple[str | None, str | None, str | None, Usage]] = []
        self._total = UsageSum()
        self._tasks: dict[str | None, UsageSum] = {}

    def add(self, task: str | None, agent: str | None, model: str | None, usage: Usage) -> None:
        """Enter one call's usage, once (whoever else wants the figure reads it here)."""
        with self._lock:
            self._entries.append((task, agent, model, usage))
            self._total.add(usage)
            tally = self._tasks.get(task)
            if tally is None:
                tally = self._tasks[task] = UsageSum()
            tally.add(usage)

    # -- running totals (cheap) ----------------------------------------------------------

    @property
    def total(self) -> Usage:
        return self._total.usage()

    @property
    def total_tokens(self) -> int:
        return self._total.total

    @property
    def cost(self) -> float:
        return self._total.cost

    @property
    def requests(self) -> int:
        return self._total.requests

    def for_task(self, task: str) -> Usage:
        """What the run spent on ``task``: every attempt, and the work delegated from it."""
        tally = self._tasks.get(task)
        return tally.usage() if tally is not None else Usage()

    # -- breakdowns ------------------------------------------------------------------------

    def by_agent(self) -> dict[str, Usage]:
        return self._breakdown(lambda entry: entry.agent)

    def by_model(self) -> dict[str, Usage]:
        return self._breakdown(lambda entry: entry.model)

    @property
    def entries(self) -> tuple[UsageEntry, ...]:
        with self._lock:
            return tuple(UsageEntry(*entry) for entry in self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def _breakdown(self, key_of: Callable[[UsageEntry], str | None]) -> dict[str, Usage]:
        tallies: dict[str, UsageSum] = {}
        for entry in self.entries:
            key = key_of(entry)
            if key is not None:
                tally = tallies.get(key)
                if tally is None:
                    tally = tallies[key] = UsageSum()
                tally.add(entry.usage)
        return {key: tally.usage() for key, tally in tallies.items()}
