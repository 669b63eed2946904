"""What every execution backend offers, and what a batch of kickoffs reports.

A backend runs *one kickoff* somewhere (this event loop, a Ray worker) and hands its
``CrewOutput`` back to the driver. Everything a batch needs beyond that (how many at
once, order, failures, budgets, Ctrl-C) is the batch runner's, the same for all
backends, so results are always recorded by the driver, once per input.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from crew.common.usage import Usage
from crew.tasks.output import CrewOutput

Status = Literal["done", "failed", "paused", "cancelled", "skipped"]


@runtime_checkable
class Backend(Protocol):
    """Runs kickoffs of one crew: ``open`` once, ``kickoff`` many times (concurrently), ``close``."""

    name: str

    async def open(self, crew: Any) -> None:
        """Get ready to run ``crew`` (connect to a cluster, ship the crew); errors here stop the batch."""
        ...

    async def kickoff(self, crew: Any, inputs: dict[str, Any], *, run_id: str) -> CrewOutput:
        """One kickoff; raises what ``Crew.kickoff_async`` raises (``CrewRunError`` for a failed task)."""
        ...

    async def close(self) -> None: ...


class KickoffResult(BaseModel):
    """The outcome of one input of a batch: one line of ``crew kickoff --for-each`` output.

    ``status`` is "done", "failed" (its error says why), "paused" (a tool call waits for
    a person's approval: ``output.pending_approvals``), "cancelled" (stopped while
    running: Ctrl-C, ``on_error="stop"``) or "skipped" (never started, for the same
    reasons or because the batch budget was spent).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: int
    status: Status
    inputs: dict[str, Any] = Field(default_factory=dict)
    run_id: str | None = None
    raw: str | None = None
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    duration: float = 0.0
    output: CrewOutput | None = None

    _exception: BaseException | None = PrivateAttr(default=None)

    @property
    def exception(self) -> BaseException | None:
        """The exception of a failed kickoff, as raised where the batch runs (not serialised)."""
        return self._exception

    def to_json_line(self) -> dict[str, Any]:
        """The JSON Lines record: everything, the full output included."""
        return self.model_dump(mode="json")


class BatchStatus(BaseModel):
    """Live counts of a running batch (what a progress view shows)."""

    total: int = 0
    done: int = 0
    failed: int = 0
    paused: int = 0
    """Kickoffs that stopped at a tool call waiting for a person's approval (docs/approvals.md)."""
    cancelled: int = 0
    skipped: int = 0
    running: int = 0
    usage: Usage = Field(default_factory=Usage)
    stopped: str | None = None
    """Why no new kickoff starts any more (an error with ``on_error="stop"``, the budget), if so."""

    @property
    def finished(self) -> int:
        return self.done + self.failed + self.paused + self.cancelled + self.skipped

    def summary(self) -> str:
        parts = [f"{self.done} done", f"{self.failed} failed"]
        if self.paused:
            parts.append(f"{self.paused} paused")
        if self.cancelled:
            parts.append(f"{self.cancelled} cancelled")
        if self.skipped:
            parts.append(f"{self.skipped} skipped")
        if self.running:
            parts.append(f"{self.running} running")
        parts.append(f"{self.usage.total_tokens:,} tokens")
        if self.usage.cost:
            parts.append(f"${self.usage.cost:.4f}")
        return f"{self.finished}/{self.total}: " + " · ".join(parts)
